"""Names on disk: the sessions root, the per-session layout and the id rules that keep paths safe."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

from strands_durable.errors import UsageError

SESSION_PREFIX = "session_"
SESSION_JSON = "session.json"
PATTERN_STATE_JSON = "pattern_state.json"
SPEC_SNAPSHOT = "spec_snapshot.yaml"
LEASE_JSON = "lease.json"
LEASE_LOCK = "lease.lock"
AGENTS_DIR = "agents"
BACKUPS_DIR = "backups"

_SAFE_KEY = re.compile(r"^[A-Za-z0-9._:-]+$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_ID_PREFIX = re.compile(r"^[0-9a-f-]{1,36}$")
_NAMED_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
NAMED_ID_RULE = "1-128 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit, without '..'"


def default_sessions_dir() -> Path:
    configured = os.environ.get("STRANDS_SESSIONS_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".strands" / "sessions"


def new_session_id() -> str:
    return str(uuid.uuid4())


def is_session_id(text: str) -> bool:
    return bool(_UUID.match(text))


def is_named_session_id(text: str) -> bool:
    """A caller-chosen session id (plain-Python agent sessions): see NAMED_ID_RULE."""
    return bool(_NAMED_ID.match(text)) and ".." not in text


def check_id_prefix(text: str) -> str:
    if not _ID_PREFIX.match(text):
        raise UsageError(f"Not a session id: {text!r} (expected a uuid or a prefix of at least 8 characters)")
    return text


def session_dir(root: Path, session_id: str) -> Path:
    if not (is_session_id(session_id) or is_named_session_id(session_id)):
        raise UsageError(f"Not a session id: {session_id!r} (a session id is a uuid or {NAMED_ID_RULE})")
    return root / f"{SESSION_PREFIX}{session_id}"


def safe_key(key: str) -> str:
    """A conversation key usable as one directory name (validated ids only: no separators, no dot names)."""
    if not _SAFE_KEY.match(key) or key in {".", ".."}:
        raise ValueError(f"unsafe storage key {key!r}")
    return key


def message_file_name(index: int) -> str:
    return f"message_{index}.json"
