"""Simulated power loss: the disk model's semantics, every crash state of a real run resumes, and broken stores
(no journal fsync, no directory fsync, writes in place) are caught. SIGKILL cannot reveal a missing fsync: shown."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from strands_durable import LocalStore
from strands_durable.faults.classes import power
from strands_durable.faults.classes.kill import explore_kill
from strands_durable.faults.classes.power import DiskModel, crash_states, explore_power
from strands_durable.faults.classes.recording import Op, RecordingFileOps
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.store import local_session
from strands_durable.store.fileops import AppendHandle, FileOps
from strands_durable.store.syncer_thread import SyncerThread
from tests.faults.conftest import describe, rules
from tests.slow_disk import SlowSyncOps

# -- the disk model -------------------------------------------------------------------------------------------------


def _model(base: Path, ops: list[Op]) -> DiskModel:
    model = DiskModel(base)
    for index, op in enumerate(ops):
        model.apply(index, op)
    return model


def _by_kind(model: DiskModel) -> dict[str, dict[Path, bytes]]:
    return {state.kind: state.files for state in crash_states(model, 99)}


def test_an_unsynced_append_is_lost_or_torn_and_a_synced_one_survives(tmp_path: Path) -> None:
    log = tmp_path / "j"
    model = _model(
        tmp_path,
        [
            Op("create", log),
            Op("fsync_dir", tmp_path),
            Op("append", log, data=b"one\n"),
            Op("fdatasync", log),
            Op("append", log, data=b"two-two\n"),
        ],
    )
    states = _by_kind(model)
    assert states["lost"][log] == b"one\n"
    assert states["all"][log] == b"one\ntwo-two\n"
    assert states["torn"][log] == b"one\ntwo-"


def test_a_rename_without_a_directory_fsync_may_be_undone_and_a_new_file_may_vanish(tmp_path: Path) -> None:
    tmp, final, fresh = tmp_path / ".f.tmp", tmp_path / "f", tmp_path / "g"
    model = _model(
        tmp_path,
        [
            Op("create", tmp),
            Op("write", tmp, data=b"new"),
            Op("fsync", tmp),
            Op("rename", tmp, final),
            Op("create", fresh),
            Op("write", fresh, data=b"x"),
        ],
    )
    states = _by_kind(model)
    assert final not in states["lost"] and tmp not in states["lost"] and fresh not in states["lost"]
    assert states["all"] == {final: b"new", fresh: b"x"}
    # reordered: a later entry (g) reached the disk while the earlier ones that publish f did not
    assert any(k.startswith("reorder-") and final not in s and fresh in s for k, s in states.items())
    model.apply(9, Op("fsync_dir", tmp_path))
    model.apply(10, Op("fsync", fresh))
    assert _by_kind(model)["lost"] == {final: b"new", fresh: b"x"}


def test_an_unsynced_rewrite_over_a_durable_file_may_leave_an_empty_file(tmp_path: Path) -> None:
    tmp, final = tmp_path / ".v.tmp", tmp_path / "v"
    model = _model(
        tmp_path,
        [
            Op("create", final),
            Op("write", final, data=b"old"),
            Op("sync_all"),
            Op("create", tmp),
            Op("write", tmp, data=b"new"),
            Op("rename", tmp, final),
        ],
    )
    contents = {state.kind: state.files.get(final) for state in crash_states(model, 99)}
    assert contents["lost"] == b"old" and contents["all"] == b"new"
    assert b"" in contents.values()  # the rename reached the disk before the data: the zero-length file


# -- the real store survives; broken stores are caught ---------------------------------------------------------------


def test_every_power_cut_of_a_real_run_resumes_to_the_golden_result(chain_target: ChaosTarget, tmp_path: Path) -> None:
    run = explore_power(chain_target, tmp_path)
    assert run.explored > 100 and run.unique_states > 60
    assert run.outcomes["resumed"] > 50
    assert not run.findings, describe(run.findings)


class _NoJournalFsync(RecordingFileOps):
    """A broken store: the journal's fdatasync does nothing (commits return before they are durable)."""

    def open_append(self, path: Path) -> AppendHandle:
        handle = super().open_append(path)
        handle.sync = lambda: None  # type: ignore[method-assign]
        return handle


class _NoDirectoryFsync(RecordingFileOps):
    """A broken store: new files and renames are never made durable in their directory."""

    def fsync_dir(self, path: Path) -> None:
        return None


class _UnsyncedSnapshot(RecordingFileOps):
    """A broken store: the spec snapshot is written at session creation without its fsync."""

    def write_file(self, path: Path, data: bytes, *, sync: bool) -> None:
        super().write_file(path, data, sync=sync and "spec_snapshot.yaml" not in path.name)


class _InPlace(RecordingFileOps):
    """A broken store: files are rewritten in place instead of through a temp file and a rename."""

    def write_atomic(self, path: Path, data: bytes, *, durable: bool = True) -> None:
        self.write_file(path, data, sync=durable)
        if durable:
            self.fsync_dir(path.parent)


def test_power_loss_catches_a_store_that_does_not_fsync_the_journal(chain_target: ChaosTarget, tmp_path: Path) -> None:
    run = explore_power(chain_target, tmp_path, recorder=_NoJournalFsync())
    assert "data-lost" in rules(run.findings), describe(run.findings)


def test_power_loss_catches_a_store_that_does_not_fsync_the_spec_snapshot(
    chain_target: ChaosTarget, tmp_path: Path
) -> None:
    run = explore_power(chain_target, tmp_path, recorder=_UnsyncedSnapshot())
    assert "data-lost" in rules(run.findings), describe(run.findings)
    assert any("spec snapshot" in f.detail for f in run.findings)


def test_power_loss_catches_a_store_that_skips_the_directory_fsync(chain_target: ChaosTarget, tmp_path: Path) -> None:
    run = explore_power(chain_target, tmp_path, recorder=_NoDirectoryFsync())
    assert "data-lost" in rules(run.findings), describe(run.findings)
    assert any("session is gone" in f.detail for f in run.findings)


def test_power_loss_catches_a_store_that_trusts_unflushed_files_after_the_cut(
    chain_target: ChaosTarget, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # close marks the readable files as written on this boot, without flushing them; a machine that came back
    # from a power cut with the same boot id (a store keyed on something a reboot keeps, say /etc/machine-id)
    # would trust files the cut took
    monkeypatch.setattr(power, "after_power_cut", lambda sessions: LocalStore(sessions))
    run = explore_power(chain_target, tmp_path)
    lost = [f.detail for f in run.findings if f.rule == "needs-repair"]
    assert any("Corrupt session file" in detail for detail in lost), describe(run.findings)


def test_a_creation_stays_atomic_under_power_loss_even_for_a_store_that_writes_in_place(
    chain_target: ChaosTarget, tmp_path: Path
) -> None:
    # this test used to catch the journal header such a store writes in place, torn by the cut ("does not load
    # after a power cut: Corrupt session file"). A session is now built in a staging directory renamed into place
    # once its files are durable (store/local_create.py): a torn header lies in a directory nobody reads, so every
    # state has the whole session or none (the chain run rewrites no other file that matters in place)
    run = explore_power(chain_target, tmp_path, recorder=_InPlace())
    assert run.findings == [], describe(run.findings)
    assert run.outcomes["not-created"] > 0 and run.outcomes["resumed"] > 0, run.outcomes


# -- SIGKILL cannot reveal a missing fsync; power loss can -----------------------------------------------------------


class _NoJournalFsyncOps(FileOps):
    def open_append(self, path: Path) -> AppendHandle:
        handle = super().open_append(path)
        handle.sync = lambda: None  # type: ignore[method-assign]
        return handle


def test_sigkill_cannot_reveal_a_missing_fsync_but_a_power_cut_can(
    chain_target: ChaosTarget, chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    killed = explore_kill(
        chain_target,
        tmp_path / "kill",
        signals=("SIGKILL",),
        max_points=12,
        golden=chain_golden,
        store_factory=lambda root: LocalStore(root, fileops=_NoJournalFsyncOps()),
    )
    assert killed.explored == 12 and killed.outcomes["resumed"] == 12
    assert not killed.findings, "the kernel keeps a killed process's writes: SIGKILL sees no difference"
    powered = explore_power(chain_target, tmp_path / "power", recorder=_NoJournalFsync())
    assert killed.outcomes["killed by SIGKILL"] == 12  # the kill harness really killed every child
    lost = [f.detail for f in powered.findings if f.rule == "data-lost"]
    assert any("had returned durable" in detail for detail in lost), describe(powered.findings)


# -- deferred commits: an fdatasync on another thread, promises at the barrier ---------------------------------------


class _HeldSync(FileOps):
    """The real operations; the journal's fdatasync waits for `go` (so another thread can append meanwhile)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.go = threading.Event()

    def open_append(self, path: Path) -> AppendHandle:
        inner = super().open_append(path)
        ops = self

        class Handle:
            def append(self, data: bytes) -> None:
                inner.append(data)

            def sync(self) -> None:
                ops.started.set()
                ops.go.wait(10)
                inner.sync()

            def close(self) -> None:
                inner.close()

        return Handle()


class _HeldRecording(RecordingFileOps):
    def __init__(self) -> None:
        super().__init__()
        self._ops = self.held = _HeldSync()


def test_an_fdatasync_covers_only_what_was_appended_before_it_started(tmp_path: Path) -> None:
    ops = _HeldRecording()
    log = tmp_path / "j"
    handle = ops.open_append(log)
    ops.fsync_dir(tmp_path)
    handle.append(b"one\n")
    syncer = threading.Thread(target=handle.sync)
    syncer.start()
    assert ops.held.started.wait(5)
    handle.append(b"two\n")  # while the fdatasync is in flight: it may or may not be covered
    ops.held.go.set()
    syncer.join(5)
    handle.close()
    states = _by_kind(_model(tmp_path, ops.log))
    assert states["lost"][log] == b"one\n"
    assert states["all"][log] == b"one\ntwo\n"


class _EarlySyncer(SyncerThread):
    """A broken barrier: it takes a deferred commit for durable without waiting for its fdatasync."""

    def wait(self, seq: int) -> None:
        with self._cond:
            self._durable = max(self._durable, seq)


def test_power_loss_catches_a_barrier_that_promises_before_the_fdatasync(
    chain_target: ChaosTarget, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_session, "SyncerThread", _EarlySyncer)
    run = explore_power(chain_target, tmp_path, recorder=_SlowJournal())
    assert "data-lost" in rules(run.findings), describe(run.findings)


class _SlowJournal(RecordingFileOps):
    """A disk whose fdatasync takes 20 ms: a deferred commit's fdatasync is still in flight at the barrier."""

    def __init__(self) -> None:
        super().__init__()
        self._ops = SlowSyncOps()
