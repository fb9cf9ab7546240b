"""A session as read from the bucket (`StoredSession`), and what an open session and its compaction need of the
store that read it (`SessionReader`): kept apart from `store.py` so that the store imports its sessions and their
compaction, and they never import it back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from strands_durable.store.journal import Line
from strands_durable.store.s3.client import Listed, Objects
from strands_durable.store.s3.keys import Keys
from strands_durable.store.s3.scratch import Manifest
from strands_durable.store.state import SessionState


@dataclass
class StoredSession:
    """A session as read from the bucket: its latest checkpoint, the records after it, their fold."""

    header: bytes  # the header record's bytes
    records: list[Line]  # each record after the checkpoint, with its bytes (from the header when there is none)
    state: SessionState
    fences: dict[int, dict[str, Any]]  # seq -> `fence` field of every fence record (checkpointed ones too)
    checkpoint_seq: int  # -1: no checkpoint
    checkpoint_digest: str  # sha256 of the checkpoint object ("" without one)
    leftovers: list[str]  # keys a finished compaction no longer needs (a crash stopped its deletes)
    scratch: Manifest | None = None  # the scratch files' manifest (store/s3/scratch.py); None: never recorded
    # bytes `journal_bytes` gives before `records`: the checkpoint object's, or (the history kept) its records'
    head_size: int = 0
    listing: list[Listed] | None = None  # the session's keys as the read listed them (None: not listed)


class SessionReader(Protocol):
    """The part of `S3Store` an `S3Session` and its `Compaction` use: the bucket, its settings and its reads."""

    bucket: str
    keys: Keys
    objects: Objects
    strict: bool
    batch: bool
    checkpoint_every: int
    keep_history: bool

    def read(self, session_id: str, *, fresh: bool = False) -> StoredSession: ...

    def read_after(self, session_id: str, seq: int) -> list[Line] | None: ...

    def spec_snapshot(self, session_id: str) -> bytes: ...

    def scratch_dir(self, session_id: str) -> Path: ...
