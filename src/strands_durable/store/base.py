"""The store interface: sessions are created, opened (leased), committed to and closed, in commits not files.

Nothing above this module knows which implementation it has: local files, memory, or a fault-injecting one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from strands_durable.crashpoints import CrashPoints
from strands_durable.store.state import SessionState


@dataclass(frozen=True)
class SessionSummary:
    session_id: str
    workflow_name: str
    pattern: str
    status: str  # running, paused, completed, failed
    stale: bool  # running, but no live process holds the lease
    reason: str | None
    created_at: str | None
    updated_at: str | None
    spec_path: str | None

    @property
    def display_status(self) -> str:
        return "running (stale)" if self.stale else self.status


class Session(ABC):
    """An open, leased session. `commit` is the one way to change it; each call is one atomic commit point."""

    state: SessionState
    warnings: list[str]

    @abstractmethod
    def commit(self, events: list[dict[str, Any]], *, path: str = "", durable: bool = True) -> None:
        """Append one commit record. `durable=False` skips the fsync: only for records that can be re-derived
        from durable ones (a prompt, a results message, a unit outcome read from its conversation); the next
        durable commit or `close` makes it durable too, since the journal is one ordered file."""

    @abstractmethod
    def spec_snapshot(self) -> bytes: ...

    @abstractmethod
    def abandon(self) -> None:
        """Let go as a crashed process would: no flush, no final record; only the lease is released."""

    @abstractmethod
    def close(self) -> None:
        """Flush the readable files, make everything durable and release the lease."""

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SessionStore(ABC):
    @abstractmethod
    def create(
        self, meta: dict[str, Any], spec_snapshot: bytes, *, crash_points: CrashPoints | None = None
    ) -> Session: ...

    @abstractmethod
    def open(self, session_id: str, *, crash_points: CrashPoints | None = None, check: bool = True) -> Session:
        """Lease and recover a session for running. Raises SessionNotFound, SessionInUse, CorruptSession.

        `check=False` skips verifying readable files and stored histories (for `sessions repair`, which
        exists to fix them); the journal is always verified.
        """

    @abstractmethod
    def load(self, session_id: str) -> SessionState:
        """Read a session without leasing it (show, export, check)."""

    @abstractmethod
    def list(self) -> list[SessionSummary]: ...

    @abstractmethod
    def delete(self, session_id: str) -> None: ...

    @abstractmethod
    def resolve(self, id_or_prefix: str) -> str:
        """The full id for a full id or a unique prefix of at least 8 characters (SessionNotFound otherwise)."""
