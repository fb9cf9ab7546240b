"""DurableStorage under the SDK's SnapshotSessionManager: fsync'd writes, and no silent overwrite between writers."""

from __future__ import annotations

import pytest
from strands import Agent
from strands.session import SnapshotSessionManager

from strands_durable.faults.classes.recording import RecordingFileOps
from strands_durable.sdk.storage import DurableStorage, StorageConflict

from .support import World


def _agent(world: World, storage: DurableStorage) -> Agent:
    return Agent(
        model=world.model(["one", "two", "three"]),
        callback_handler=None,
        session_manager=SnapshotSessionManager("trip", storage=storage, save_latest_on="message"),
    )


def test_snapshots_are_written_with_fsync_and_restored(tmp_path):
    world = World(tmp_path / "s")
    ops = RecordingFileOps()
    agent = _agent(world, DurableStorage(tmp_path / "store", fileops=ops))
    agent("hello")
    kinds = [op.kind for op in ops.log]
    assert "fsync" in kinds and "fsync_dir" in kinds
    again = _agent(world, DurableStorage(tmp_path / "store"))
    assert [m["role"] for m in again.messages] == ["user", "assistant"]


def test_a_second_writer_cannot_silently_overwrite_a_newer_snapshot(tmp_path):
    world = World(tmp_path / "s")
    first = _agent(world, DurableStorage(tmp_path / "store"))
    first("hello")
    one, two = _agent(world, DurableStorage(tmp_path / "store")), _agent(world, DurableStorage(tmp_path / "store"))
    one("from one")
    with pytest.raises(Exception) as raised:
        two("from two")  # its snapshot_latest is older than one's: refused, not overwritten
    seen: BaseException | None = raised.value
    while seen is not None and not isinstance(seen, StorageConflict):
        seen = seen.__cause__ or seen.__context__
    assert isinstance(seen, StorageConflict)
    again = _agent(world, DurableStorage(tmp_path / "store"))
    texts = [b.get("text") for m in again.messages for b in m["content"]]
    assert "from one" in texts and "from two" not in texts
