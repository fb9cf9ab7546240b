"""Reopening a session after a crash writes again only the readable files a crash left missing or different
(`LocalSession.mark_intact_message_files`): the message files from the first one whose bytes differ from what the
journal derives (same length, longer, shorter, missing) on, and agent.json when it differs (agent.json may also
be written again with the message files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from strands_durable import LocalStore
from strands_durable.faults.classes.recording import RecordingFileOps
from strands_durable.store.fileops import is_temp_file
from strands_durable.store.layout import new_session_id

MESSAGES = 5


def _message(index: int) -> dict[str, Any]:
    role = "user" if index % 2 == 0 else "assistant"
    message = {"role": role, "content": [{"text": f"message {index}"}]}
    return {"type": "message", "conv": "c.a", "agent": "a", "unit": "u", "index": index, "message": message}


def _crashed_session(root: Path) -> tuple[str, Path]:
    """A session whose message files and agent.json were all written, then abandoned (a crash: no closing mark)."""
    store = LocalStore(root)
    session = store.create({"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}, b"")
    for index in range(MESSAGES):
        session.commit([_message(index)])
    session.flush_views()
    session.abandon()
    directory = store.directory_of(session.session_id)
    return session.session_id, directory / "agents" / "c.a"


def _written_on_reopen(root: Path, session_id: str) -> set[str]:
    """The readable files of agent c.a that reopening the session and closing it wrote again."""
    ops = RecordingFileOps()
    LocalStore(root, fileops=ops).open(session_id).close()
    written = {op.dst for op in ops.log if op.kind == "rename" and op.dst is not None}
    written |= {op.path for op in ops.log if op.kind == "write" and op.path is not None}
    return {p.name for p in written if p.parent.name in ("messages", "c.a") and not is_temp_file(p.name)}


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "same length":
        path.write_bytes(data.replace(b"message", b"MESSAGE"))
    elif how == "longer":
        path.write_bytes(data + b" ")
    elif how == "shorter":
        path.write_bytes(data[:-2])
    else:
        path.unlink()


def test_nothing_intact_is_written_again(tmp_path: Path) -> None:
    session_id, _ = _crashed_session(tmp_path)
    assert _written_on_reopen(tmp_path, session_id) == set()


@pytest.mark.parametrize("how", ["same length", "longer", "shorter", "missing"])
def test_from_the_first_damaged_message_file_on_every_file_is_written_again(tmp_path: Path, how: str) -> None:
    session_id, agent_dir = _crashed_session(tmp_path)
    expected = {name: (agent_dir / "messages" / name).read_bytes() for name in _names(range(MESSAGES))}
    _damage(agent_dir / "messages" / "message_2.json", how)
    written = _written_on_reopen(tmp_path, session_id)
    assert written - {"agent.json"} == set(_names(range(2, MESSAGES)))
    assert {name: (agent_dir / "messages" / name).read_bytes() for name in expected} == expected


@pytest.mark.parametrize("how", ["same length", "longer", "shorter", "missing"])
def test_a_damaged_agent_file_is_written_again_alone(tmp_path: Path, how: str) -> None:
    session_id, agent_dir = _crashed_session(tmp_path)
    expected = (agent_dir / "agent.json").read_bytes()
    _damage(agent_dir / "agent.json", how)
    assert _written_on_reopen(tmp_path, session_id) == {"agent.json"}
    assert (agent_dir / "agent.json").read_bytes() == expected


def _names(indexes: range) -> list[str]:
    return [f"message_{index}.json" for index in indexes]
