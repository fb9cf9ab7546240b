"""Names on disk: the sessions root, the per-session layout and the id rules that keep paths safe."""

from __future__ import annotations

import os
import re
from pathlib import Path

from strands_durable.errors import UsageError
from strands_durable.store.ids import is_session_id, new_session_id

__all__ = [
    "AGENTS_DIR",
    "BACKUPS_DIR",
    "DELETING_PREFIX",
    "LEASE_JSON",
    "LEASE_LOCK",
    "PATTERN_STATE_JSON",
    "SESSIONS_DIR_ENV",
    "SESSION_JSON",
    "SESSION_PREFIX",
    "SPEC_SNAPSHOT",
    "default_sessions_dir",
    "is_session_id",
    "message_file_name",
    "new_session_id",
    "safe_key",
    "session_dir",
]

SESSION_PREFIX = "session_"
SESSION_JSON = "session.json"
PATTERN_STATE_JSON = "pattern_state.json"
SPEC_SNAPSHOT = "spec_snapshot.yaml"
LEASE_JSON = "lease.json"
LEASE_LOCK = "lease.lock"
AGENTS_DIR = "agents"
BACKUPS_DIR = "backups"
DELETING_PREFIX = ".deleting_"  # + a session directory's name: a delete under way, finished by the next one

_SAFE_KEY = re.compile(r"^[A-Za-z0-9._:-]+$")


SESSIONS_DIR_ENV = "STRANDS_SESSIONS_DIR"


def default_sessions_dir() -> Path:
    configured = os.environ.get(SESSIONS_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".strands" / "sessions"


def session_dir(root: Path, session_id: str) -> Path:
    if not is_session_id(session_id):
        raise UsageError(f"Not a session id: {session_id!r}")
    return root / f"{SESSION_PREFIX}{session_id}"


def safe_key(key: str) -> str:
    """A conversation key usable as one directory name (validated ids only: no separators, no dot names)."""
    if not _SAFE_KEY.fullmatch(key) or key in {".", ".."}:
        raise ValueError(f"unsafe storage key {key!r}")
    return key


def message_file_name(index: int) -> str:
    return f"message_{index}.json"
