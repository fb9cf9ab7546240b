"""The background writer of message files: it writes the message files of durable commits while the session runs,
never those of records not yet durable, and leaves no thread behind when the session closes or is abandoned."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from strands_durable.store import LocalStore
from strands_durable.store.layout import new_session_id


def _message(index: int) -> dict[str, Any]:
    role = "user" if index % 2 == 0 else "assistant"
    message = {"role": role, "content": [{"text": f"message {index}"}]}
    return {"type": "message", "conv": "c.a", "agent": "a", "unit": "u", "index": index, "message": message}


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
    assert [t for t in threading.enumerate() if t.name.startswith("views-")] == []


def test_an_abandoned_session_leaves_no_writer_running(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session = store.create({"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}, b"")
    for index in range(50):
        session.commit([_message(index)])
    session.abandon()
    assert [t for t in threading.enumerate() if t.name.startswith("views-")] == []
    reopened = store.open(session.session_id)  # what the writer had written is whole: the reopen accepts it
    assert len(reopened.state.conversations["c.a"].messages) == 50
    reopened.close()
