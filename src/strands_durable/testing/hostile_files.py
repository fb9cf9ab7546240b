"""Hostile files: damage done to a closed local session's files by hand, a bad disk or another program, and what
the store must make of each (issue 39). The cases of a fault class that damages sessions, and of the tests that
hold the rule of docs/storage.md ("Damaged sessions"): one damaged session never breaks the directory, a damaged
record is never silently dropped.

Each case damages one file of a session directory and says what follows:

- `corrupt`: `sessions list` shows the session as `corrupt (<file>: <reason>)`; `show`, `export`, `run
  --resume` and `repair` exit 17 naming the file; `sessions delete` removes it.
- `repairable`: a readable file (derived from the journal) is damaged: `sessions check` names it, `sessions
  repair` writes it again, and then the session resumes as if nothing had happened.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from strands_durable.store import LocalStore
from strands_durable.store.base import frame_line

Outcome = Literal["corrupt", "repairable"]
TOO_DEEP = 100_000  # levels of nesting in a hostile JSON file: Python's decoder raises RecursionError past ~1000


@dataclass(frozen=True)
class HostileFile:
    """One way to damage a session: `damage(store, session_id)` breaks one of its files and returns it; `outcome`
    is what the store makes of it, and `reason` what it says (found in the text after `<file>: `)."""

    name: str
    damage: Callable[[LocalStore, str], Path]
    outcome: Outcome
    reason: str


def _random_bytes(store: LocalStore, session_id: str) -> Path:
    journal = store.journal_path(session_id)
    noise = os.urandom(300).replace(b"\n", b"?")
    store.fileops.write_file(journal, noise + b"\n" + noise[:40], sync=False)
    return journal


def _emptied(store: LocalStore, session_id: str) -> Path:
    journal = store.journal_path(session_id)
    store.fileops.write_file(journal, b"", sync=False)
    return journal


def _deleted(store: LocalStore, session_id: str) -> Path:
    journal = store.journal_path(session_id)
    store.fileops.remove(journal)
    return journal


def _a_directory(store: LocalStore, session_id: str) -> Path:
    journal = _deleted(store, session_id)
    store.fileops.mkdir(journal)
    return journal


def _too_deep_record(store: LocalStore, session_id: str) -> Path:
    """A checksummed record nested far past what the store writes, appended as the journal's next one."""
    journal = store.journal_path(session_id)
    seq = len(store.journal_bytes(session_id).splitlines())
    payload = b'{"seq":%d,"at":"x","events":[{"type":"status","status":"paused","x":' % seq
    payload += b"[" * TOO_DEEP + b"]" * TOO_DEEP + b"}]}"
    appender = store.fileops.open_append(journal)
    try:
        appender.append(frame_line(payload))
    finally:
        appender.close()
    return journal


def _damaged_last_record(store: LocalStore, session_id: str) -> Path:
    """One flipped bit in the middle of the last record, which keeps its newline: a committed record damaged after
    it was written (the session was closed on this boot of the machine, so no power cut can have torn it)."""
    journal = store.journal_path(session_id)
    data = bytearray(store.journal_bytes(session_id))
    start = data.rstrip(b"\n").rindex(b"\n") + 1
    data[start + (len(data) - start) // 2] ^= 0x04
    store.fileops.write_file(journal, bytes(data), sync=False)
    return journal


def _too_deep_view(store: LocalStore, session_id: str) -> Path:
    view = store.directory_of(session_id) / "session.json"
    store.fileops.write_file(view, b"[" * TOO_DEEP + b"]" * TOO_DEEP, sync=False)
    return view


def _too_deep_message(store: LocalStore, session_id: str) -> Path:
    message = store.message_files(session_id, 0)[0]
    store.fileops.write_file(
        message, b'{"message_id": 0, "message": ' + b"[" * TOO_DEEP + b"]" * TOO_DEEP + b"}", sync=False
    )
    return message


CASES: tuple[HostileFile, ...] = (
    HostileFile(
        "journal-random-bytes", _random_bytes, "corrupt", "its first line is not a strands-durable journal header"
    ),
    HostileFile("journal-emptied", _emptied, "corrupt", "empty"),
    HostileFile("journal-deleted", _deleted, "corrupt", "missing"),
    HostileFile("journal-a-directory", _a_directory, "corrupt", "a directory, not a file"),
    HostileFile("journal-too-deep-record", _too_deep_record, "corrupt", "is nested deeper than"),
    HostileFile("journal-damaged-last-record", _damaged_last_record, "corrupt", "is complete but fails its checksum"),
    HostileFile("session-json-too-deep", _too_deep_view, "repairable", "missing or not a JSON object"),
    HostileFile("message-too-deep", _too_deep_message, "repairable", "missing, truncated or not JSON"),
)
"""Every case, in a stable order (a fault class's variants; tests parametrize over them by `name`)."""


def case(name: str) -> HostileFile:
    return next(c for c in CASES if c.name == name)
