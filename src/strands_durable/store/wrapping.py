"""`WrappingStore`: a real store that wraps another and lets tests observe or fault it, as httpx's MockTransport
is a real transport. Every call goes to the wrapped store; hooks see opens, commits and closes and may raise."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from strands_durable.crashpoints import CrashPoints
from strands_durable.errors import DurableError
from strands_durable.store.base import (
    Inspection,
    KnownJournal,
    LeaseHolder,
    Session,
    SessionStore,
    SessionSummary,
    Workspace,
)
from strands_durable.store.io_errors import io_error
from strands_durable.store.state import SessionState

__all__ = ["CommitCall", "UnitStore", "WrappedSession", "WrappingStore"]


@dataclass(frozen=True)
class CommitCall:
    """One `Session.commit` call as a hook sees it (`events` is the caller's list: do not change it). `seq` is the
    record's seq, known after the commit (None in `on_commit`); read it rather than `session.state.seq`, which
    another thread's commit may already have moved."""

    session_id: str
    events: list[dict[str, Any]]
    path: str
    durable: bool
    synced: bool
    seq: int | None = None


OpenHook = Callable[["WrappedSession", bool], None]  # (session, created)
CommitHook = Callable[["WrappedSession", CommitCall], None]
CloseHook = Callable[["WrappedSession", bool], None]  # (session, abandoned)


class WrappedSession(Session):
    """A session of the wrapped store, seen through the hooks of its `WrappingStore`."""

    def __init__(self, store: WrappingStore, inner: Session) -> None:
        self.store = store
        self.inner = inner

    @property  # type: ignore[override]
    def state(self) -> SessionState:
        return self.inner.state

    @property  # type: ignore[override]
    def warnings(self) -> list[str]:
        return self.inner.warnings

    def commit(
        self,
        events: list[dict[str, Any]],
        *,
        path: str = "",
        durable: bool = True,
        synced: bool = False,
        wait: bool = True,
    ) -> int:
        call = CommitCall(self.session_id, events, path, durable, synced)
        if self.store.on_commit is not None:
            try:
                self.store.on_commit(self, call)  # raising here is a fault before the commit point
            except OSError as exc:  # an injected disk error reaches the caller as a store's would
                raise io_error(exc, f"cannot commit to session {self.session_id}") from exc
        seq = self.inner.commit(events, path=path, durable=durable, synced=synced, wait=wait)
        call = replace(call, seq=seq)
        if self.store.record:
            self.store.commits.append(call)
        if self.store.after_commit is not None:
            self.store.after_commit(self, call)  # raising here is a fault after the commit point
        return seq

    def wait_durable(self, seq: int | None = None) -> None:
        self.inner.wait_durable(seq)

    def spec_snapshot(self) -> bytes:
        return self.inner.spec_snapshot()

    def spec_snapshot_name(self) -> str:
        return self.inner.spec_snapshot_name()

    def abandon(self) -> None:
        if self.store.on_close is not None:
            self.store.on_close(self, True)
        self.inner.abandon()

    def close(self) -> None:
        if self.store.on_close is not None:
            self.store.on_close(self, False)
        self.inner.close()

    def refresh_views(self) -> list[str]:
        return self.inner.refresh_views()

    def backup_of(self, conversation: str) -> str | None:
        return self.inner.backup_of(conversation)

    def journal_size(self) -> int:
        return self.inner.journal_size()

    def stored_seq(self) -> int:
        return self.inner.stored_seq()


class WrappingStore(SessionStore):
    """Wraps `inner`. `on_open(session, created)` runs after a create or open; `on_commit(session, call)` before
    each commit and `after_commit(session, call)` after it; `on_close(session, abandoned)` before a close or an
    abandon (the closing sync mark is the wrapped store's own: hooks see the close, not its record). A hook that
    raises faults the store at that point; an OSError raised by `on_commit` reaches the caller as the store's
    exit-12 error, as a failing disk's would. `record=True` keeps every commit call in `commits`; `sessions`
    holds every session opened, newest last."""

    def __init__(
        self,
        inner: SessionStore,
        *,
        on_open: OpenHook | None = None,
        on_commit: CommitHook | None = None,
        after_commit: CommitHook | None = None,
        on_close: CloseHook | None = None,
        record: bool = False,
    ) -> None:
        self.inner = inner
        self.on_open = on_open
        self.on_commit = on_commit
        self.after_commit = after_commit
        self.on_close = on_close
        self.record = record
        self.commits: list[CommitCall] = []
        self.sessions: list[WrappedSession] = []

    @property
    def session(self) -> WrappedSession | None:
        """The session opened or created last."""
        return self.sessions[-1] if self.sessions else None

    def _wrap(self, inner: Session, *, created: bool) -> WrappedSession:
        session = WrappedSession(self, inner)
        self.sessions.append(session)
        if self.on_open is not None:
            try:
                self.on_open(session, created)
            except BaseException:
                inner.abandon()
                raise
        return session

    def create(
        self,
        meta: dict[str, Any],
        spec_snapshot: bytes,
        *,
        crash_points: CrashPoints | None = None,
        session_id: str | None = None,
    ) -> WrappedSession:
        inner = self.inner.create(meta, spec_snapshot, crash_points=crash_points, session_id=session_id)
        return self._wrap(inner, created=True)

    def open(self, session_id: str, *, crash_points: CrashPoints | None = None, check: bool = True) -> WrappedSession:
        return self._wrap(self.inner.open(session_id, crash_points=crash_points, check=check), created=False)

    @property  # type: ignore[override]
    def unit_leases(self) -> bool:
        return self.inner.unit_leases

    def open_unit(
        self,
        session_id: str,
        *,
        unit: str,
        attempt: int,
        crash_points: CrashPoints | None = None,
        check: bool = True,
    ) -> WrappedSession:
        inner = self.inner.open_unit(session_id, unit=unit, attempt=attempt, crash_points=crash_points, check=check)
        return self._wrap(inner, created=False)

    def load(self, session_id: str, **options: Any) -> SessionState:
        return self.inner.load(session_id, **options)  # `upto_seq` where the inner store has it

    def session_ids(self) -> list[str]:
        return self.inner.session_ids()

    def list(self) -> list[SessionSummary]:
        return self.inner.list()

    def delete(self, session_id: str) -> None:
        self.inner.delete(session_id)

    def finish_interrupted_deletes(self, failed: list[tuple[str, DurableError]] | None = None) -> list[str]:
        return self.inner.finish_interrupted_deletes(failed)

    def holder(self, session_id: str) -> LeaseHolder | None:
        return self.inner.holder(session_id)

    def unit_holders(self, session_id: str) -> list[LeaseHolder]:
        return self.inner.unit_holders(session_id)

    def resolve(self, id_or_prefix: str) -> str:
        return self.inner.resolve(id_or_prefix)

    def inspect(self, session_id: str) -> Inspection:
        return self.inner.inspect(session_id)

    def workspace(self, session_id: str) -> Workspace:
        return self.inner.workspace(session_id)

    @property  # type: ignore[override]
    def replayable(self) -> bool:
        return self.inner.replayable

    def journal_bytes(self, session_id: str) -> bytes:
        return self.inner.journal_bytes(session_id)

    def spec_snapshot_bytes(self, session_id: str) -> bytes:
        return self.inner.spec_snapshot_bytes(session_id)

    def seed(self, session_id: str, *, header: dict[str, Any], tail: bytes, spec_snapshot: bytes) -> bytes:
        return self.inner.seed(session_id, header=header, tail=tail, spec_snapshot=spec_snapshot)

    def knowing(self, known: KnownJournal) -> WrappingStore:
        """The inner store's `knowing`, behind the same hooks (a new wrapper: its own `sessions` and `commits`)."""
        hooks = {"on_open": self.on_open, "on_commit": self.on_commit, "after_commit": self.after_commit}
        return WrappingStore(self.inner.knowing(known), on_close=self.on_close, record=self.record, **hooks)


class UnitStore(WrappingStore):
    """`inner` as seen by one attempt of one unit of a run: its `open` is `inner.open_unit(unit, attempt)`, so the
    runner (plan mode) runs that unit under the unit's lease with no other change (strands_durable.temporal)."""

    def __init__(self, inner: SessionStore, unit: str, attempt: int) -> None:
        super().__init__(inner)
        self.unit = unit
        self.attempt = attempt

    def open(self, session_id: str, *, crash_points: CrashPoints | None = None, check: bool = True) -> WrappedSession:
        return self.open_unit(session_id, unit=self.unit, attempt=self.attempt, crash_points=crash_points, check=check)
