"""Which folders of a local sessions directory are sessions, and how `sessions list` shows one it cannot read.

The rule (docs/storage.md, "Damaged sessions"): a folder named `session_<id>` is a session when its journal starts
with our header or our record frame, or when it holds a file only a session of ours writes once its journal exists
(pattern_state.json, or a session.json of ours: the Strands SDK's FileSessionManager keeps a session.json and
agents/ under the same folder name), or when this process may not look inside it. Such a session that
cannot be read is listed as `corrupt (<file>: <reason>)`; a command on it exits 17 naming the file, and `sessions
delete` removes it. A folder that merely has the name (another program's log, what a failed creation left) is
never read, listed or touched. Nothing here raises for one session's damage: the listing of every other session
goes on.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

from strands_durable.errors import CorruptSession, DurableError, SessionUnreadable
from strands_durable.store import layout
from strands_durable.store.base import SessionSummary
from strands_durable.store.io_errors import io_error
from strands_durable.store.journal import JOURNAL_NAME, first_line, is_header_line, looks_like_a_record
from strands_durable.store.verify import read_json_object

OURS = "ours"
DAMAGED = "damaged"  # looks like a session, but its journal is missing, not ours or unreadable
UNREADABLE = "unreadable"  # named like a session, and this process may not look inside
CORRUPT = "corrupt"  # the status `sessions list` gives a damaged or unreadable session

_VIEW_MARK = b'"journal_seq"'  # in every session.json of ours, in none of the Strands SDK's FileSessionManager
_DENIED = (errno.EACCES, errno.EPERM)


def folder_kind(directory: Path) -> str | None:
    """OURS, DAMAGED, UNREADABLE, or None when the folder is not a session (or is gone)."""
    try:
        first = first_line(os.path.join(directory, JOURNAL_NAME))
        if is_header_line(first):
            return OURS
        if looks_like_a_record(first):
            return DAMAGED  # our frame, its header damaged or cut short
    except OSError as exc:
        if exc.errno in _DENIED:
            try:
                os.listdir(directory)
            except OSError:
                return UNREADABLE
            return DAMAGED  # the folder can be read, its journal cannot
    try:
        names = os.listdir(directory)
    except OSError as exc:
        return UNREADABLE if exc.errno in _DENIED else None
    return DAMAGED if layout.PATTERN_STATE_JSON in names or _our_view(directory) else None


def _our_view(directory: Path) -> bool:
    """Whether the folder's session.json is one of ours (a Strands FileSessionManager keeps a session.json and an
    agents/ folder of its own under the same `session_<id>` name)."""
    try:
        with open(directory / layout.SESSION_JSON, "rb") as view:
            return _VIEW_MARK in view.read(1 << 16)
    except OSError:
        return False


def file_error(exc: OSError, path: Path) -> DurableError:
    """What an OSError reading a session's file means: missing or not a file (CorruptSession), not readable by
    this process (SessionUnreadable): both exit 17 naming the file; anything else is an I/O failure (exit 12)."""
    if isinstance(exc, FileNotFoundError | NotADirectoryError):
        return CorruptSession(str(path), "missing")
    if isinstance(exc, IsADirectoryError):
        return CorruptSession(str(path), "a directory, not a file")
    if exc.errno in _DENIED:
        return SessionUnreadable(str(path), "permission denied")
    return io_error(exc, f"cannot read {path}")


def corrupt_summary(directory: Path, session_id: str, problem: BaseException) -> SessionSummary:
    """The row of a session that cannot be read: status `corrupt`, the reason `<file>: <what>` (the file relative
    to the session's folder), and what its session.json still tells, when it does."""
    view = _readable_view(directory, session_id)
    return SessionSummary(
        session_id=session_id,
        workflow_name=_text(view.get("workflow_name")) or "-",
        pattern=_text(view.get("pattern")) or "-",
        status=CORRUPT,
        stale=False,
        reason=_reason(directory, problem),
        created_at=_text(view.get("created_at")),
        updated_at=_text(view.get("updated_at")),
        spec_path=_text(view.get("spec_path")),
    )


def summary_of_view(session_id: str, view: dict[str, Any], *, stale: bool) -> SessionSummary:
    """A session's row from its view (session.json or the journal's own), every field text or None whatever a
    hand-edited file holds."""
    return SessionSummary(
        session_id=session_id,
        workflow_name=str(view.get("workflow_name")),
        pattern=str(view.get("pattern")),
        status=_text(view.get("status")) or "running",
        stale=stale,
        reason=_text(view.get("status_reason")),
        created_at=_text(view.get("created_at")),
        updated_at=_text(view.get("updated_at")),
        spec_path=_text(view.get("spec_path")),
    )


def _readable_view(directory: Path, session_id: str) -> dict[str, Any]:
    view = read_json_object(directory / layout.SESSION_JSON)
    return view if view is not None and view.get("session_id") == session_id else {}


def _reason(directory: Path, problem: BaseException) -> str:
    path = getattr(problem, "path", None) or getattr(problem, "filename", None)
    detail = getattr(problem, "detail", None) or getattr(problem, "strerror", None) or str(problem)
    if not path:
        return str(detail)
    target = Path(path)
    name = str(target.relative_to(directory)) if directory in target.parents else target.name
    return f"{name}: {detail}"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
