"""A session a crashed run abandons is freed the moment its last user lets go: its views writer and journal syncer
call back into it through weak references (store/weak_calls.py), so neither makes a cycle with it that would keep
its state until a collection. What it committed is on disk as before. One dropped without `close` or `abandon`
releases its lease when it is collected (store/lease.py)."""

from __future__ import annotations

import contextlib
import gc
import os
import time
import warnings
import weakref
from pathlib import Path

import pytest

from strands_durable import LocalStore
from strands_durable.errors import SessionInUse
from strands_durable.store.layout import new_session_id


def _message(index: int) -> dict:
    role = "user" if index % 2 == 0 else "assistant"
    message = {"role": role, "content": [{"text": f"message {index}"}]}
    return {"type": "message", "conv": "c.a", "agent": "a", "unit": "u", "index": index, "message": message}


def test_an_abandoned_session_is_freed_at_once_and_its_commits_stay(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session = store.create({"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}, b"")
    session_id = session.session_id
    session.commit([_message(0)])  # durable: wakes the views writer
    session.commit([_message(1)], wait=False)  # deferred: handed to the syncer
    session.wait_durable()
    session.abandon()  # what a run that crashed does
    alive = weakref.ref(session)
    gc.disable()
    try:
        del session
        deadline = time.monotonic() + 5  # a views run in progress holds it until the run ends
        while alive() is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert alive() is None, "the dropped session waits in a cycle for the collector"
    finally:
        gc.enable()
    reopened = store.open(session_id)
    assert [m["content"][0]["text"] for m in reopened.state.conversations["c.a"].messages] == [
        "message 0",
        "message 1",
    ]
    reopened.close()


def _open_under(directory: Path) -> list[str]:
    """What this process's open descriptors point to inside `directory`."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor is gone by now
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith(f"{directory}{os.sep}"):
                found.append(target)
    return found


def test_a_session_dropped_without_close_lets_its_lease_go_with_a_resource_warning(tmp_path: Path) -> None:
    """Forgetting `close()` (or `abandon()`) must not keep the session from everyone until the process ends: when the
    session is collected, its lease goes as a dead process's does (its descriptors closed), and a ResourceWarning
    names the session."""
    store = LocalStore(tmp_path)
    created = store.create({"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}, b"")
    session_id = created.session_id
    created.close()
    dropped = store.open(session_id)
    assert _open_under(tmp_path)  # its lease and its journal
    dropped.commit([_message(0)])
    with pytest.raises(SessionInUse):  # held while its holder is alive
        store.open(session_id)
    alive = weakref.ref(dropped)
    with pytest.warns(ResourceWarning, match=f"session {session_id} was dropped without close"):
        del dropped
        deadline = time.monotonic() + 5  # a views run in progress holds it until the run ends
        while alive() is not None and time.monotonic() < deadline:
            gc.collect()
            time.sleep(0.01)
    assert alive() is None
    assert _open_under(tmp_path) == []  # the lease's and the journal's descriptors closed
    reopened = store.open(session_id)  # the lease is free again, in this process as in any other
    assert [m["content"][0]["text"] for m in reopened.state.conversations["c.a"].messages] == ["message 0"]
    reopened.close()


def test_a_closed_session_leaves_descriptors_alone_when_collected(tmp_path: Path) -> None:
    """Its lease's descriptor was closed by `close`, and its number may belong to another file by then."""
    store = LocalStore(tmp_path)
    session = store.create({"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}, b"")
    session.close()
    with contextlib.ExitStack() as files:
        # the lowest free numbers, the session's files' among them
        others = [files.enter_context(open(tmp_path / f"other-{n}", "wb")) for n in range(8)]
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            del session
            gc.collect()
        for other in others:
            os.fstat(other.fileno())  # still open
