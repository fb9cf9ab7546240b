"""Session ids: generated UUIDs or caller-chosen names, the rule both must follow, and finding one by prefix.

Every store answers `resolve` with `resolve_session_id`, so all of them agree on what an id or a prefix means.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import Any

from strands_durable.errors import SessionExists, SessionNotFound, UsageError

__all__ = [
    "ID_RULE",
    "MIN_PREFIX",
    "check_new_session_id",
    "is_session_id",
    "new_session_id",
    "new_session_meta",
    "resolve_session_id",
]

ID_RULE = "a letter or digit, then up to 127 letters, digits, '.', '_' or '-', without '..'"
MIN_PREFIX = 8
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_UUID_PREFIX = re.compile(r"^[0-9a-f-]{1,36}$")


def new_session_id() -> str:
    return str(uuid.uuid4())


def is_session_id(text: str) -> bool:
    """True for a generated UUID or a caller-chosen id that follows `ID_RULE`."""
    return bool(_ID.fullmatch(text)) and ".." not in text


def is_uuid(text: str) -> bool:
    return bool(_UUID.fullmatch(text))


def check_new_session_id(requested: str | None, existing: Iterable[str]) -> str:
    """The id a new session gets: `requested` when it follows the rule and no session has it (in any letter
    case: case-insensitive file systems would share one directory), else a new UUID when None."""
    if requested is None:
        return new_session_id()
    if not isinstance(requested, str) or not is_session_id(requested):
        raise UsageError(f"Not a valid session id: {requested!r} (use {ID_RULE})")
    folded = requested.casefold()
    for other in existing:
        if other.casefold() == folded:
            if other == requested:
                raise SessionExists(requested)
            raise UsageError(f"Session id {requested!r} differs only in letter case from existing session {other!r}")
    return requested


def could_be_prefix(text: str) -> bool:
    """Whether `text` may be (the start of) a UUID session id: hexadecimal digits and dashes, at most 36 (in any
    letter case)."""
    return _UUID_PREFIX.fullmatch(text.lower()) is not None


def resolve_session_id(id_or_prefix: str, existing: Iterable[str]) -> str:
    """The full id for an exact id (any session), or a unique prefix of at least 8 characters of a UUID session.

    UsageError (exit 2) for text that can be neither, a too short prefix or an ambiguous one; SessionNotFound
    when nothing matches.
    """
    text = id_or_prefix.strip()
    ids = list(existing)
    if text in ids:
        return text
    lowered = text.lower()
    if is_uuid(lowered):
        if lowered in ids:
            return lowered
        raise SessionNotFound(text)
    if not could_be_prefix(lowered):
        if is_session_id(text):
            raise SessionNotFound(text)
        raise UsageError(f"Not a session id: {text!r} (expected an id or a prefix of at least {MIN_PREFIX} characters)")
    matches = [sid for sid in ids if is_uuid(sid) and sid.startswith(lowered)]
    if len(lowered) < MIN_PREFIX:
        raise UsageError(f"Session id prefix too short: {text} (give at least {MIN_PREFIX} characters)")
    if not matches:
        raise SessionNotFound(text)
    if len(matches) > 1:
        raise UsageError(f"Ambiguous session id prefix {text}: matches {len(matches)} sessions")
    return matches[0]


def new_session_meta(meta: dict[str, Any], session_id: str | None, existing: Iterable[str]) -> dict[str, Any]:
    """A new session's metadata, its id settled: `session_id` (or `meta["session_id"]`) checked by
    `check_new_session_id` against `existing`, a new UUID when neither is given. Every store's `create` uses it."""
    requested = session_id if session_id is not None else meta.get("session_id")
    return {**meta, "session_id": check_new_session_id(requested, existing)}
