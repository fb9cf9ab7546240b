"""Which folders are sessions (`listing.folder_kind`) is decided by the journal's first line as it is on disk at each
call: a process that has seen a session's header before (the chaos explorer opens a session at every crash point,
and remembers verdicts by the exact bytes) still finds a header damaged since, and a header longer than the first
read is read whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable import LocalStore
from strands_durable.errors import CorruptSession
from strands_durable.store.listing import DAMAGED, OURS, folder_kind
from strands_durable.store.local import JOURNAL_NAME

META = {
    "workflow_name": "header",
    "pattern": "chain",
    "spec_path": "/header.yaml",
    "spec_hash": "0" * 64,
    "variables": {},
    "created_at": "2026-01-01T00:00:00+00:00",
    "runtime": {"provider": "synthetic", "seed": 0},
}


def _session(store: LocalStore, variables: dict[str, str]) -> tuple[str, Path]:
    session = store.create({**META, "variables": variables}, b"name: header\n")
    session.close()
    return session.state.session_id, session.directory


def test_a_header_damaged_after_this_process_read_it_is_found_at_the_next_call(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session_id, directory = _session(store, {})
    for _ in range(3):  # seen, and remembered, several times
        assert folder_kind(directory) == OURS
        store.load(session_id)
    journal = directory / JOURNAL_NAME
    data = bytearray(journal.read_bytes())
    at = data.index(b'"workflow_name":"header"') + len(b'"workflow_name":"')
    data[at] = ord("H")  # same length, same inode size: only the checksum tells
    journal.write_bytes(bytes(data))
    assert folder_kind(directory) == DAMAGED
    with pytest.raises(CorruptSession, match=JOURNAL_NAME):
        store.load(session_id)
    with pytest.raises(CorruptSession, match=JOURNAL_NAME):
        store.open(session_id)


def test_a_header_longer_than_the_first_read_is_read_whole(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session_id, directory = _session(store, {"long": "x" * 20_000})
    assert (directory / JOURNAL_NAME).read_bytes().index(b"\n") > 20_000
    assert folder_kind(directory) == OURS
    assert store.load(session_id).meta["variables"]["long"] == "x" * 20_000
    assert store.session_ids() == [session_id]


def test_load_reads_the_journal_once_and_workspace_reads_nothing_yet_each_folder_kind_is_told_as_before(
    tmp_path: Path, monkeypatch
) -> None:
    """`load` (the chaos kit reads every crash point back with it) decides the folder is ours from the journal's
    first line in the bytes it reads, not by reading that line first; `workspace` is a path. What is not plainly
    ours is still told by `folder_kind`: a damaged header is corrupt (exit 17), a folder that merely has the
    name is not found, a session whose journal is gone is corrupt naming the journal."""
    import strands_durable.store.local as local_module
    from strands_durable.errors import SessionNotFound

    store = LocalStore(tmp_path)
    session_id, directory = _session(store, {"a": "1"})
    asked: list[Path] = []
    monkeypatch.setattr(local_module, "folder_kind", lambda d: asked.append(d) or folder_kind(d))
    opened: list[str] = []
    real_open = local_module.FileOps.read_bytes
    monkeypatch.setattr(local_module.FileOps, "read_bytes", lambda ops, p: opened.append(p.name) or real_open(ops, p))
    assert store.load(session_id).meta["variables"] == {"a": "1"}
    assert store.workspace(session_id).scratch_dir == directory / "scratch"
    assert asked == [] and opened == [JOURNAL_NAME]
    store.open(session_id).close()
    assert asked == [directory]  # open still asks before it writes the lease into the folder

    journal = directory / JOURNAL_NAME
    data = journal.read_bytes()
    journal.write_bytes(data.replace(b'"a":"1"', b'"a":"2"', 1))  # the header's checksum no longer holds
    with pytest.raises(CorruptSession, match=JOURNAL_NAME) as caught:
        store.load(session_id)
    assert caught.value.exit_code == 17
    journal.unlink()
    with pytest.raises(CorruptSession, match=f"{JOURNAL_NAME}.*missing"):
        store.load(session_id)  # pattern_state.json or our session.json says it was a session of ours

    other = tmp_path / f"session_{session_id[:-1]}{'0' if session_id[-1] != '0' else '1'}"
    other.mkdir()
    (other / JOURNAL_NAME).write_text("another program's log\n")
    with pytest.raises(SessionNotFound):
        store.load(other.name[len("session_") :])
    with pytest.raises(SessionNotFound):
        store.workspace("../elsewhere")
