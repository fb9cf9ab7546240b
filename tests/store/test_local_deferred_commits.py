"""Deferred commits and the barrier (`commit(wait=False)`, `wait_durable`): the record is appended at once, a
syncer thread fdatasyncs it, records appended while an fdatasync is in flight share the next one, a failed
fdatasync surfaces at the barrier as exit 12 and breaks the session, and no thread outlives the session. Where the
journal's last timed fdatasync was cheaper than a handover, the sync runs inline instead, with the same barrier and
the same failure. The fdatasyncs are observed through the FileOps seam: the real operations, with the journal's
sync held or failed."""

from __future__ import annotations

import errno
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from strands_durable import CrashPoints, LocalStore, MemoryStore
from strands_durable.crashpoints import Commit, Durable
from strands_durable.errors import StorageIOError, exit_code_for
from strands_durable.store.base import read_journal_bytes
from strands_durable.store.fileops import AppendHandle, FileOps
from strands_durable.store.layout import new_session_id


class HeldSyncs(FileOps):
    """The real file operations; the journal's fdatasyncs are counted, can be held in flight (`hold`) until
    `release`, and can be made to fail (`fail`)."""

    def __init__(self) -> None:
        self.syncs = 0
        self.in_flight = threading.Event()
        self.gate = threading.Event()
        self.gate.set()
        self.fail: OSError | None = None
        self.appended_when_synced: list[int] = []  # the journal's appends done when each fdatasync started

    def hold(self) -> None:
        self.gate.clear()

    def release(self) -> None:
        self.gate.set()

    def open_append(self, path: Path) -> AppendHandle:
        inner = super().open_append(path)
        ops = self
        appends = [0]

        class Handle:
            def append(self, data: bytes) -> None:
                inner.append(data)
                appends[0] += 1

            def sync(self) -> None:
                ops.appended_when_synced.append(appends[0])
                ops.in_flight.set()
                ops.gate.wait(10)
                ops.syncs += 1
                if ops.fail is not None:
                    raise ops.fail
                inner.sync()

            def close(self) -> None:
                inner.close()

        return Handle()


def _message(index: int) -> dict[str, Any]:
    message = {"role": "user" if index % 2 == 0 else "assistant", "content": [{"text": f"message {index}"}]}
    return {"type": "message", "conv": "c.a", "agent": "a", "unit": "u", "index": index, "message": message}


def _result(tool_use_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "conv": "c.a", "result": {"toolUseId": tool_use_id, "content": [{"text": "4"}]}}


def _open(tmp_path: Path, ops: FileOps, bus: CrashPoints | None = None, *, inline_below_s: float = 0.0) -> Any:
    """A store and a new session; by default every deferred commit goes to the syncer thread (never inline)."""
    store = LocalStore(tmp_path, fileops=ops, inline_sync_below_s=inline_below_s)
    meta = {"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}
    return store, store.create(meta, b"", crash_points=bus)


def _threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(("sync-", "views-"))]


def _eventually(condition: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.002)
    return condition()


def test_a_deferred_commit_returns_before_its_fdatasync_and_the_barrier_waits_for_it(tmp_path: Path) -> None:
    ops = HeldSyncs()
    store, session = _open(tmp_path, ops)
    before = ops.syncs
    ops.hold()
    seq = session.commit([_message(0)], wait=False)  # returns with its fdatasync held in flight
    assert ops.in_flight.wait(5)
    assert session.state.seq == seq and ops.syncs == before
    barrier = threading.Thread(target=session.wait_durable)
    barrier.start()
    time.sleep(0.1)
    assert barrier.is_alive()  # the barrier does not return before the fdatasync did
    ops.release()
    barrier.join(5)
    assert not barrier.is_alive() and ops.syncs == before + 1
    session.close()
    assert len(store.load(session.session_id).conversations["c.a"].messages) == 1


def test_records_appended_while_an_fdatasync_is_in_flight_share_the_next_one(tmp_path: Path) -> None:
    ops = HeldSyncs()
    _, session = _open(tmp_path, ops)
    before = ops.syncs
    ops.hold()
    session.commit([_message(0)], wait=False)
    assert ops.in_flight.wait(5)
    for index in range(1, 11):  # ten more deferred commits while the first fdatasync is held
        session.commit([_message(index)], wait=False)
    ops.release()
    session.wait_durable()
    assert ops.syncs == before + 2  # the held one, and one for all ten
    assert ops.appended_when_synced[-1] - ops.appended_when_synced[-2] == 10
    session.close()


def test_a_failed_fdatasync_surfaces_at_the_barrier_with_exit_12_and_breaks_the_session(tmp_path: Path) -> None:
    ops = HeldSyncs()
    _, session = _open(tmp_path, ops)
    ops.fail = OSError(errno.EIO, "Input/output error")
    session.commit([_message(0)], wait=False)  # the commit itself succeeds: its fdatasync has not run yet
    with pytest.raises(StorageIOError) as raised:
        session.wait_durable()
    assert exit_code_for(raised.value) == 12
    assert "cannot commit to session" in str(raised.value) and "EIO" in str(raised.value)
    with pytest.raises(StorageIOError, match="cannot commit after an I/O failure"):
        session.commit([_message(1)])
    with pytest.raises(StorageIOError):  # the barrier keeps saying so
        session.wait_durable()
    session.close()
    assert _eventually(lambda: _threads() == [])


def test_close_waits_for_deferred_commits_and_no_thread_outlives_it(tmp_path: Path) -> None:
    ops = HeldSyncs()
    store, session = _open(tmp_path, ops)
    for index in range(20):
        session.commit([_message(index)], wait=False)
    session.close()
    assert _syncers() == [] and _eventually(lambda: _threads() == [])  # the views' thread once idle
    data = store.journal_path(session.session_id).read_bytes()
    assert len(read_journal_bytes(data).records) == 1 + 20 + 1  # header, the commits, the close mark


def test_an_abandoned_session_leaves_no_syncer_running(tmp_path: Path) -> None:
    ops = HeldSyncs()
    _, session = _open(tmp_path, ops)
    for index in range(20):
        session.commit([_message(index)], wait=False)
    session.abandon()  # as a crashed run: no barrier, no close record
    assert _syncers() == [] and _eventually(lambda: _threads() == [])  # the views' thread once idle


def test_a_deferred_commit_is_promised_when_a_barrier_covers_it_not_when_it_returns(tmp_path: Path) -> None:
    bus = CrashPoints()
    seen: list[tuple[str, int, bool, tuple[Any, ...]]] = []
    bus.subscribe(
        Commit, lambda p: seen.append((p.site, p.seq, p.durable, ())) if p.site == "store.after_commit" else None
    )
    bus.subscribe(Durable, lambda e: seen.append(("durable", e.seq, True, e.tool_results)))
    _, session = _open(tmp_path, FileOps(), bus)
    seen.clear()
    first = session.commit([_message(0)], wait=False)
    second = session.commit([_result("t1")], wait=False)
    assert seen == [("store.after_commit", first, False, ()), ("store.after_commit", second, False, ())]
    session.wait_durable(first)  # only up to the answer: the barrier promises what it knows durable
    session.wait_durable()
    promised = [entry for entry in seen if entry[0] == "durable"]
    assert promised and promised[-1][1] == second
    assert ("c.a", "t1") in [key for entry in promised for key in entry[3]]
    third = session.commit([_result("t2")], wait=False)
    session.commit([_message(1)])  # a synchronous durable commit's fdatasync covers the deferred one before it
    assert seen[-2] == ("durable", third, True, (("c.a", "t2"),))
    session.close()


def test_stores_whose_commits_are_durable_at_once_take_wait_and_the_barrier_as_no_ops() -> None:
    store = MemoryStore()
    session = store.create({"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}, b"")
    seq = session.commit([_message(0)], wait=False)
    session.wait_durable()
    session.wait_durable(seq)
    assert session.state.seq == seq
    session.close()


def _syncers() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("sync-")]


def test_where_the_last_timed_fdatasync_was_cheap_a_deferred_commit_is_synced_inline_without_a_thread(
    tmp_path: Path,
) -> None:
    ops = HeldSyncs()
    bus = CrashPoints()
    promised: list[int] = []
    bus.subscribe(Durable, lambda e: promised.append(e.seq))
    store, session = _open(tmp_path, ops, bus, inline_below_s=60.0)  # any timed sync counts as cheap here
    first = session.commit([_message(0)], wait=False)  # no sync timed yet for this file layer: the thread's
    session.wait_durable()
    session.commit([_message(1)])  # a synchronous commit's own fdatasync is timed
    assert _eventually(lambda: _syncers() == [])  # the first one's thread, idle, has ended
    before = ops.syncs
    seqs = [session.commit([_message(index)], wait=False) for index in range(2, 6)]
    assert ops.syncs == before + 4 and _syncers() == []  # each synced before its commit returned, on this thread
    assert session._syncer.durable == seqs[-1]
    assert first < seqs[0] and promised[-1] < seqs[0]  # announced at the barrier, not when it returned
    session.wait_durable()
    assert promised[-1] == seqs[-1]
    session.close()
    assert len(store.load(session.session_id).conversations["c.a"].messages) == 6


def test_a_failed_inline_fdatasync_surfaces_at_the_barrier_with_exit_12_and_breaks_the_session(
    tmp_path: Path,
) -> None:
    ops = HeldSyncs()
    _, session = _open(tmp_path, ops, inline_below_s=60.0)
    session.commit([_message(0)])  # timed: cheap
    ops.fail = OSError(errno.EIO, "Input/output error")
    session.commit([_message(1)], wait=False)  # the commit itself succeeds: its failure is the barrier's to say
    assert _syncers() == []
    with pytest.raises(StorageIOError) as raised:
        session.wait_durable()
    assert exit_code_for(raised.value) == 12 and "EIO" in str(raised.value)
    with pytest.raises(StorageIOError, match="cannot commit after an I/O failure"):
        session.commit([_message(2)])
    session.close()


def test_where_the_last_timed_fdatasync_was_slow_the_thread_syncs_again(tmp_path: Path) -> None:
    ops = HeldSyncs()
    _, session = _open(tmp_path, ops, inline_below_s=0.1)
    session.commit([_message(0)])  # timed: cheaper than 0.1 s, so a deferred commit now would be synced inline
    ops.hold()
    slow = threading.Thread(target=session.commit, args=([_message(1)],))  # a synchronous commit, held 0.2 s
    slow.start()
    assert ops.in_flight.wait(5)
    time.sleep(0.2)
    ops.release()
    slow.join(5)
    ops.hold()  # the held sync took 0.2 s: the next one is the thread's
    ops.in_flight.clear()
    session.commit([_message(2)], wait=False)  # returns with its fdatasync held on the thread
    assert ops.in_flight.wait(5) and _syncers() != []
    ops.release()
    session.wait_durable()
    session.close()
