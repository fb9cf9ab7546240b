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
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from strands_durable.store import layout
from strands_durable.store.bounded_json import MAX_DEPTH
from strands_durable.store.journal import JOURNAL_NAME

Outcome = Literal["corrupt", "repairable"]
TOO_DEEP = 100_000  # levels of nesting in a hostile JSON file: Python's decoder raises RecursionError past ~1000


@dataclass(frozen=True)
class HostileFile:
    """One way to damage a session: `damage(directory)` breaks a file of the session directory and returns it;
    `outcome` is what the store makes of it, and `reason` what it says (the text after `<file>: `)."""

    name: str
    damage: Callable[[Path], Path]
    outcome: Outcome
    reason: str


def _journal(directory: Path) -> Path:
    return directory / JOURNAL_NAME


def _random_bytes(directory: Path) -> Path:
    journal = _journal(directory)
    noise = os.urandom(300).replace(b"\n", b"?")
    journal.write_bytes(noise + b"\n" + noise[:40])
    return journal


def _emptied(directory: Path) -> Path:
    journal = _journal(directory)
    journal.write_bytes(b"")
    return journal


def _deleted(directory: Path) -> Path:
    journal = _journal(directory)
    journal.unlink()
    return journal


def _a_directory(directory: Path) -> Path:
    journal = _journal(directory)
    journal.unlink()
    journal.mkdir()
    return journal


def _too_deep_record(directory: Path) -> Path:
    """A checksummed record nested far past MAX_DEPTH, appended as the journal's next one."""
    journal = _journal(directory)
    seq = len(journal.read_bytes().splitlines())
    payload = b'{"seq":%d,"at":"x","events":[{"type":"status","status":"paused","x":' % seq
    payload += b"[" * TOO_DEEP + b"]" * TOO_DEEP + b"}]}"
    with open(journal, "ab") as handle:
        handle.write(b"%08x " % zlib.crc32(payload) + payload + b"\n")
    return journal


def _damaged_last_record(directory: Path) -> Path:
    """One flipped bit in the middle of the last record, which keeps its newline: a committed record damaged after
    it was written (the session was closed on this boot of the machine, so no power cut can have torn it)."""
    journal = _journal(directory)
    data = bytearray(journal.read_bytes())
    start = data.rstrip(b"\n").rindex(b"\n") + 1
    data[start + (len(data) - start) // 2] ^= 0x04
    journal.write_bytes(bytes(data))
    return journal


def _too_deep_view(directory: Path) -> Path:
    view = directory / layout.SESSION_JSON
    view.write_bytes(b"[" * TOO_DEEP + b"]" * TOO_DEEP)
    return view


def _too_deep_message(directory: Path) -> Path:
    message = sorted((directory / layout.AGENTS_DIR).glob(f"*/messages/{layout.message_file_name(0)}"))[0]
    message.write_bytes(b'{"message_id": 0, "message": ' + b"[" * TOO_DEEP + b"]" * TOO_DEEP + b"}")
    return message


CASES: tuple[HostileFile, ...] = (
    HostileFile(
        "journal-random-bytes", _random_bytes, "corrupt", "its first line is not a strands-durable journal header"
    ),
    HostileFile("journal-emptied", _emptied, "corrupt", "empty"),
    HostileFile("journal-deleted", _deleted, "corrupt", "missing"),
    HostileFile("journal-a-directory", _a_directory, "corrupt", "a directory, not a file"),
    HostileFile("journal-too-deep-record", _too_deep_record, "corrupt", f"nested deeper than {MAX_DEPTH} levels"),
    HostileFile("journal-damaged-last-record", _damaged_last_record, "corrupt", "is complete but fails its checksum"),
    HostileFile("session-json-too-deep", _too_deep_view, "repairable", "missing or not a JSON object"),
    HostileFile("message-too-deep", _too_deep_message, "repairable", "missing, truncated or not JSON"),
)
"""Every case, in a stable order (a fault class's variants; tests parametrize over them by `name`)."""


def case(name: str) -> HostileFile:
    return next(c for c in CASES if c.name == name)
