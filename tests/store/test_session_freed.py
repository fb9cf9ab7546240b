"""A session a crashed run abandons is freed the moment its last user lets go: its views writer and journal syncer
call back into it through weak references (store/weak_calls.py), so neither makes a cycle with it that would keep
its state until a collection. What it committed is on disk as before."""

from __future__ import annotations

import gc
import time
import weakref
from pathlib import Path

from strands_durable import LocalStore
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
