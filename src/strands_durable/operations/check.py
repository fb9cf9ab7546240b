"""`check_session`: is a session sound? The store's own findings (commit record integrity, derived files against
it) plus what holds for every store: valid stored histories, no journal result without a pending call.

The commit record is the truth. After a clean close every derived file must match it; after a crash, files
written after the last flush may lag (re-derived on the next resume), which is a warning, not a violation.
"""

from __future__ import annotations

from typing import Any

from strands_durable.history import validate
from strands_durable.store.base import Finding, SessionStore
from strands_durable.store.state import SessionState

Problem = Finding  # the name operations used before findings came from the store


def check_session(store: SessionStore, session_id: str) -> list[Problem]:
    """Every problem found in a session, errors and warnings, in a stable order (reads only, takes no lease)."""
    full_id = store.resolve(session_id)
    inspection = store.inspect(full_id)
    if inspection.state is None:
        return list(inspection.findings)
    problems: list[Problem] = []
    holder = inspection.holder
    if holder is not None:
        problems.append(Problem("warning", "lease", f"in use by {holder.describe()}; files may be changing"))
    problems.extend(inspection.findings)
    problems.extend(_check_histories(inspection.state))
    problems.extend(_check_scratch(store, full_id))
    return problems


def _check_scratch(store: SessionStore, session_id: str) -> list[Problem]:
    """The tools' scratch directory, when it exists, must be a directory (not a file a tool wrote in its place,
    not a symbolic link out of the session)."""
    scratch = store.workspace(session_id).scratch_dir
    if scratch is None:
        return []
    if scratch.is_symlink():
        return [Problem("error", "scratch", f"{scratch} is a symbolic link; the session's tools would follow it")]
    if scratch.exists() and not scratch.is_dir():
        return [Problem("error", "scratch", f"{scratch} is not a directory; the session's file tools cannot use it")]
    return []


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
