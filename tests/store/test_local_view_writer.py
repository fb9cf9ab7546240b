"""The background writer of message files: it writes the message files of durable commits while the session runs,
at most every `VIEW_INTERVAL_S` (each new file's metadata rides the journal's next fdatasync, so they are written
in batches), never those of records not yet durable, and runs nothing of a session once it is closed or abandoned.
One thread runs every session's writer, and ends soon after no run is due."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from strands_durable import CrashPoints, InjectedCrash, LocalStore
from strands_durable.store import local_session
from strands_durable.store.layout import new_session_id
from strands_durable.store.writer_thread import WriterThread


def _message(index: int) -> dict[str, Any]:
    role = "user" if index % 2 == 0 else "assistant"
    message = {"role": role, "content": [{"text": f"message {index}"}]}
    return {"type": "message", "conv": "c.a", "agent": "a", "unit": "u", "index": index, "message": message}


def _writer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("views-")]


def _no_writer_thread_soon() -> bool:
    """The writer thread ends within its idle time once no run is due (a fork or an exit waits no longer)."""
    return _eventually(lambda: _writer_threads() == [], timeout=1.0)


def _files(directory: Path) -> list[str]:
    return sorted(p.name for p in (directory / "agents" / "c.a" / "messages").glob("message_*.json"))


def _eventually(condition: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return condition()


def test_message_files_of_durable_commits_are_written_before_close_and_never_ahead_of_them(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session = store.create({"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}, b"")
    directory = store.directory_of(session.session_id)
    session.flush_views()
    session.defer_views()  # no throttled flush during the test: only the writer writes message files
    session.commit([_message(0)], durable=False)
    time.sleep(0.2)
    assert _files(directory) == []  # not durable yet: no readable file may lead the durable journal
    session.commit([_message(1)])  # durable, and the journal is ordered: message 0 is durable with it
    assert _eventually(lambda: _files(directory) == ["message_0.json", "message_1.json"])
    with session._lock:  # the writer, woken by the durable commit, reads the state only after both commits
        session.commit([_message(2)])
        session.commit([_message(3)], durable=False)
    assert _eventually(lambda: "message_2.json" in _files(directory))
    time.sleep(0.2)
    assert _files(directory) == ["message_0.json", "message_1.json", "message_2.json"]
    session.close()
    assert _files(directory) == ["message_0.json", "message_1.json", "message_2.json", "message_3.json"]
    assert _no_writer_thread_soon()


def test_an_abandoned_session_leaves_no_writer_running(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session = store.create({"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}, b"")
    for index in range(50):
        session.commit([_message(index)])
    session.abandon()
    assert _no_writer_thread_soon()
    reopened = store.open(session.session_id)  # what the writer had written is whole: the reopen accepts it
    assert len(reopened.state.conversations["c.a"].messages) == 50
    reopened.close()


def test_after_a_crash_the_writer_rederives_nothing_before_the_interval_and_close_writes_it_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a resume from a crash starts with no message file of its prefix: rewriting them all at its first commit made
    # every resume cost the length of the history (the chaos explorer resumes a crash state per crash point)
    monkeypatch.setattr(local_session, "VIEW_INTERVAL_S", 3600.0)
    store = LocalStore(tmp_path)
    session = store.create({"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}, b"")
    directory = store.directory_of(session.session_id)
    session.flush_views()
    session.defer_views()
    for index in range(4):
        session.commit([_message(index)], durable=False)
    session.abandon()  # a crash before any message file was written
    assert _files(directory) == []
    resumed = store.open(session.session_id)
    resumed.commit([_message(4)])  # durable: it wakes the writer
    time.sleep(0.3)
    assert _files(directory) == []  # what the crash left is re-derived after the interval, not at once
    resumed.close()
    assert _files(directory) == [f"message_{index}.json" for index in range(5)]
    assert _no_writer_thread_soon()


class CountedWork:
    def __init__(self) -> None:
        self.starts: list[float] = []

    def __call__(self) -> None:
        self.starts.append(time.monotonic())


def test_wakes_within_the_interval_fold_into_one_run_at_its_end_and_stop_drops_it() -> None:
    work = CountedWork()
    writer = WriterThread(work, min_interval_s=60.0)
    writer.wake()
    assert _eventually(lambda: len(work.starts) == 1)  # the first wake runs at once
    for _ in range(5):
        writer.wake()
    time.sleep(0.3)
    assert len(work.starts) == 1  # not before the interval has passed since the last run began
    began = time.monotonic()
    writer.stop()  # a run waiting for its interval is dropped: the session's close writes what is left
    assert time.monotonic() - began < 5 and len(work.starts) == 1
    assert _no_writer_thread_soon()


def test_a_wake_during_the_interval_runs_once_the_interval_has_passed() -> None:
    work = CountedWork()
    writer = WriterThread(work, min_interval_s=0.2)
    first_wake = time.monotonic()  # the first run began after this
    writer.wake()
    assert _eventually(lambda: len(work.starts) == 1)
    writer.wake()
    writer.wake()
    assert _eventually(lambda: len(work.starts) == 2)
    assert work.starts[1] - first_wake >= 0.2
    time.sleep(0.1)
    assert len(work.starts) == 2  # the two wakes folded into one run
    writer.stop()


def test_an_injected_crash_ends_the_writer_at_once_and_it_writes_nothing_more(tmp_path: Path) -> None:
    """An in-process crash is a dead process in all but name: the writer's run waiting for its interval never runs
    and its thread ends at once, so whoever waits for the crashed run's threads (the agent chaos engine joins them
    before copying what the crash left) does not wait out `VIEW_INTERVAL_S`."""
    bus = CrashPoints()
    store = LocalStore(tmp_path)
    session = store.create(
        {"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}, b"", crash_points=bus
    )
    directory = store.directory_of(session.session_id)
    session.flush_views()
    session.defer_views()  # the writer's next run waits the whole interval
    session.commit([_message(0)])  # durable: wakes the writer, which waits for its interval

    def crash_at_unit(point: Any) -> None:
        raise InjectedCrash(point)

    bus.subscribe(crash_at_unit)
    with pytest.raises(InjectedCrash):
        bus.emit("unit.before", "u")
    started = time.monotonic()
    for thread in _writer_threads():
        thread.join(5.0)
    assert time.monotonic() - started < local_session.VIEW_INTERVAL_S / 2
    time.sleep(local_session.VIEW_INTERVAL_S + 0.1)
    assert _files(directory) == []  # what the crash left is what a dead process leaves: the journal, no new views
    session.abandon()


def test_one_thread_runs_every_sessions_writer_and_outlives_a_closed_one_only_while_idle(tmp_path: Path) -> None:
    """Starting a thread costs 0.5-1 ms: sessions opened one after another (a resume per crash point) share the one
    writer thread, which runs nothing of a closed session and ends after its idle time."""
    # a run due in a minute keeps the thread meanwhile (from the start: a thread idle for its idle time while this
    # test waits for the CPU would end, and the next wake would rightly start another)
    keeper = WriterThread(lambda: None, min_interval_s=60.0)
    keeper.wake()
    # its first run made (a wake before it folds into it, leaving none due), the next wake is due in a minute
    assert _eventually(lambda: keeper.last_run > float("-inf") and keeper.due_at is None)
    keeper.wake()
    assert keeper.due_at is not None
    ran_on: list[tuple[str, threading.Thread]] = []
    first = WriterThread(lambda: ran_on.append(("first", threading.current_thread())))
    second = WriterThread(lambda: ran_on.append(("second", threading.current_thread())))
    first.wake()
    second.wake()
    assert _eventually(lambda: len(ran_on) == 2)
    assert ran_on[0][1] is ran_on[1][1] and ran_on[0][1] is not threading.current_thread()
    first.stop()
    second.stop()
    store = LocalStore(tmp_path)
    threads = set()
    for _ in range(3):  # sessions opened, committing and closed one after another
        session = store.create({"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}, b"")
        session.commit([_message(0)])  # durable: wakes the writer, whose first run is due at once
        directory = store.directory_of(session.session_id)
        assert _eventually(lambda at=directory: _files(at) == ["message_0.json"])  # written by the writer thread
        threads.update(_writer_threads())
        session.close()
    assert len(threads) == 1 and ran_on[0][1] in threads
    keeper.stop()
    first.wake()  # stopped: refused
    assert _no_writer_thread_soon() and [name for name, _ in ran_on] == ["first", "second"]
