"""`check_session`: is a session sound? Journal integrity, valid stored histories, readable files vs the journal.

The journal is the truth; the readable files derive from it. After a clean close every readable file must match
it; after a crash, files written after the last flush may lag (re-derived on the next resume), which is a
warning, not a violation.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from strands_durable.errors import CorruptSession
from strands_durable.history import validate
from strands_durable.store import layout
from strands_durable.store.base import SessionStore
from strands_durable.store.fileops import is_temp_file
from strands_durable.store.journal import JOURNAL_NAME, read_journal
from strands_durable.store.local import LocalStore, read_json_object
from strands_durable.store.state import SessionState, fold
from strands_durable.store.views import agent_view, pattern_state_view, session_view

Severity = Literal["error", "warning"]

# session.json fields that must match the journal (updated_at and journal_seq lag by the closing record)
_SESSION_FIELDS = ("session_id", "workflow_name", "pattern", "status", "token_usage", "artifacts_written")


@dataclass(frozen=True)
class Problem:
    """One finding: `error` is a violation (`strands sessions check` exits 1), `warning` is informational."""

    severity: Severity
    where: str
    detail: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.where}: {self.detail}"


def check_session(store: SessionStore, session_id: str) -> list[Problem]:
    """Every problem found in a session, errors and warnings, in a stable order (reads only, takes no lease)."""
    full_id = store.resolve(session_id)
    if not isinstance(store, LocalStore):
        return _check_histories(store.load(full_id))
    directory = store.directory_of(full_id)
    problems: list[Problem] = []
    state = _read_state(store, directory, problems)
    if state is None:
        return problems
    holder = store.holder(full_id)
    if holder is not None:
        problems.append(
            Problem("warning", "lease", f"in use by pid {holder.pid} on host {holder.host}; files may be changing")
        )
    problems.extend(_check_histories(state))
    problems.extend(readable_file_problems(directory, state))
    return problems


def _read_state(store: LocalStore, directory: Path, problems: list[Problem]) -> SessionState | None:
    path = directory / JOURNAL_NAME
    try:
        data = store.fileops.read_bytes(path)
        contents = read_journal(path, data)
    except CorruptSession as exc:
        problems.append(Problem("error", JOURNAL_NAME, str(exc)))
        return None
    except OSError as exc:
        problems.append(Problem("error", JOURNAL_NAME, f"cannot read: {os.strerror(exc.errno or 0) or exc}"))
        return None
    if not contents.records:
        problems.append(Problem("error", JOURNAL_NAME, "no complete header record"))
        return None
    if contents.torn_tail:
        torn = len(data) - contents.valid_length
        problems.append(
            Problem(
                "warning",
                JOURNAL_NAME,
                f"torn tail of {torn} bytes after record {len(contents.records) - 1} "
                "(an interrupted write; cut off on the next resume)",
            )
        )
    try:
        return fold(contents.records)
    except (KeyError, TypeError, ValueError) as exc:
        problems.append(Problem("error", JOURNAL_NAME, f"a record does not apply: {exc}"))
        return None


def _check_histories(state: SessionState) -> list[Problem]:
    problems = []
    for key, conv in sorted(state.conversations.items()):
        for violation in validate(conv.messages, mode="stored"):
            problems.append(Problem("error", f"agents/{key}", f"invalid stored history: {violation}"))
        pending = {use["toolUseId"] for use in _trailing_tool_uses(conv.messages)}
        for tool_use_id in sorted(set(conv.tool_results) - pending):
            problems.append(
                Problem(
                    "error", f"agents/{key}", f"journal holds a result for {tool_use_id}, which no pending call has"
                )
            )
    return problems


def _trailing_tool_uses(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not messages or messages[-1].get("role") != "assistant":
        return []
    return [block["toolUse"] for block in messages[-1].get("content", ()) if "toolUse" in block]


def readable_file_problems(directory: Path, state: SessionState) -> list[Problem]:
    """The readable files (session.json, pattern_state.json, agents/...) that disagree with the journal."""
    clean = state.synced_seq == state.seq
    lag: Severity = "error" if clean else "warning"
    lag_note = "" if clean else " (written after the last flush; re-derived on the next resume)"
    problems: list[Problem] = []

    view = read_json_object(directory / layout.SESSION_JSON)
    expected = session_view(state)
    if view is None:
        problems.append(Problem(lag, layout.SESSION_JSON, "missing or not a JSON object" + lag_note))
    else:
        for name in _SESSION_FIELDS:
            if view.get(name) != expected[name]:
                problems.append(
                    Problem(
                        lag,
                        layout.SESSION_JSON,
                        f"{name} is {view.get(name)!r}, the journal says {expected[name]!r}" + lag_note,
                    )
                )
        if isinstance(view.get("variables"), dict) and view["variables"] != expected["variables"]:
            problems.append(
                Problem("warning", layout.SESSION_JSON, "variables were edited by hand; the next resume uses them")
            )

    pattern_view = read_json_object(directory / layout.PATTERN_STATE_JSON)
    if pattern_view != pattern_state_view(state):
        what = "missing or not a JSON object" if pattern_view is None else "does not match the journal"
        problems.append(Problem(lag, layout.PATTERN_STATE_JSON, what + lag_note))

    agents_dir = directory / layout.AGENTS_DIR
    on_disk = set(os.listdir(agents_dir)) if agents_dir.is_dir() else set()
    for name in sorted(on_disk - set(state.conversations)):
        problems.append(Problem("error", f"agents/{name}", "has no conversation in the journal"))
    for key, conv in sorted(state.conversations.items()):
        agent_dir = agents_dir / key
        record = read_json_object(agent_dir / "agent.json")
        if record is None or record.get("message_count") != len(conv.messages):
            problems.append(Problem(lag, f"agents/{key}/agent.json", "missing or out of date" + lag_note))
        elif record != agent_view(conv):
            problems.append(Problem(lag, f"agents/{key}/agent.json", "does not match the journal" + lag_note))
        problems.extend(_check_message_files(agent_dir / "messages", key, conv.messages, conv.seqs, state, clean))
    return problems


def _check_message_files(
    messages_dir: Path,
    key: str,
    messages: list[dict[str, Any]],
    seqs: list[int],
    state: SessionState,
    clean: bool,
) -> list[Problem]:
    problems: list[Problem] = []
    names = [n for n in os.listdir(messages_dir) if not is_temp_file(n)] if messages_dir.is_dir() else []
    for name in sorted(names):
        index = _message_index(name)
        if index is None:
            problems.append(Problem("error", f"agents/{key}/messages/{name}", "not a message file"))
        elif index >= len(messages):
            problems.append(
                Problem("error", f"agents/{key}/messages/{name}", f"beyond the journal's {len(messages)} messages")
            )
    for index, message in enumerate(messages):
        where = f"agents/{key}/messages/{layout.message_file_name(index)}"
        durable = clean or seqs[index] <= state.synced_seq
        view = read_json_object(messages_dir / layout.message_file_name(index))
        if view is None:
            detail = "missing or not JSON"
        elif view.get("message_id") != index or view.get("message") != message:
            detail = "does not match the journal"
        else:
            continue
        if durable:
            problems.append(Problem("error", where, detail))
        else:
            problems.append(Problem("warning", where, detail + " (written after the last flush; re-derived on resume)"))
    return problems


def _message_index(name: str) -> int | None:
    stem, dot, suffix = name.rpartition(".")
    prefix = "message_"
    if dot and suffix == "json" and stem.startswith(prefix) and stem[len(prefix) :].isdigit():
        return int(stem[len(prefix) :])
    return None
