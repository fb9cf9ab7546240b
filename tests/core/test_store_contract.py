"""The store contract suite over LocalStore, MemoryStore and WrappingStore, and against stores broken on purpose."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from strands_durable import LocalStore, MemoryStore
from strands_durable.errors import SessionInUse
from strands_durable.store import LeaseHolder, Session, SessionStore, WrappingStore
from strands_durable.store.fileops import AppendHandle, FileOps
from strands_durable.store.memory import MemorySession
from strands_durable.store.state import fold
from strands_durable.testing.store_contract import CHECKS, run

CAPABILITY_CHECKS = {
    "durable commits survive a power loss",
    "a dead holder's session is taken over",
    "a torn final record is cut off",
    "an expired lease is fenced out",
    "entries that are not sessions are never touched",
    "replayable: journal prefixes, seeded sessions, known prefixes",  # a capability of the store itself
}
REPLAYABLE = "replayable: journal prefixes, seeded sessions, known prefixes"


class PowerCutOps(FileOps):
    """Real file operations whose journal appends reach the file only at `sync` (an fdatasync): `cut()` drops
    every append not yet synced, as a power cut drops the page cache."""

    def __init__(self) -> None:
        self.handles: list[_SyncedOnly] = []

    def open_append(self, path: Path) -> AppendHandle:
        handle = _SyncedOnly(super().open_append(path))
        self.handles.append(handle)
        return handle

    def cut(self) -> None:
        for handle in self.handles:
            handle.pending.clear()
            handle.dead = True


class _SyncedOnly:
    def __init__(self, inner: AppendHandle) -> None:
        self.inner = inner
        self.pending: list[bytes] = []
        self.dead = False

    def append(self, data: bytes) -> None:
        if not self.dead:
            self.pending.append(data)

    def sync(self) -> None:
        if not self.dead:
            for data in self.pending:
                self.inner.append(data)
            self.pending.clear()
            self.inner.sync()

    def close(self) -> None:
        if not self.dead:
            for data in self.pending:  # written to the page cache: a closed process loses nothing
                self.inner.append(data)
            self.pending.clear()
        self.inner.close()


def _local(store: SessionStore) -> LocalStore:
    return store.inner if isinstance(store, WrappingStore) else store  # type: ignore[return-value]


def _inner(session: Session) -> Any:
    return getattr(session, "inner", session)


class LocalFactory:
    """Fresh local stores under `base`, with every capability the local store can offer."""

    wrap = False

    def __init__(self, base: Path, *, checkpoint_min_bytes: int | None = None) -> None:
        self.base = base
        self.count = itertools.count()
        self.checkpoint = {} if checkpoint_min_bytes is None else {"checkpoint_min_bytes": checkpoint_min_bytes}

    def _make(self, root: Path, fileops: FileOps) -> SessionStore:
        store = LocalStore(root, fileops=fileops, **self.checkpoint)
        return WrappingStore(store, record=True) if self.wrap else store

    def __call__(self) -> SessionStore:
        return self._make(self.base / f"store{next(self.count)}", PowerCutOps())

    def twin(self, store: SessionStore) -> SessionStore:
        return self._make(_local(store).root, FileOps())

    def kill_holder(self, store: SessionStore, session: Session) -> None:
        session.abandon()  # what the kernel does for a dead process: the flock goes, nothing is flushed

    def lose_unsynced(self, store: SessionStore, session: Session) -> None:
        _local(store).fileops.cut()  # type: ignore[attr-defined]
        session.abandon()

    def damage_tail(self, store: SessionStore, session_id: str) -> None:
        journal = _local(store).directory_of(session_id) / "journal.log"
        with open(journal, "ab") as fh:
            fh.write(b'0badc0de {"seq": 99, "events": [')

    def plant_foreign(self, store: SessionStore) -> Any:
        root = _local(store).root
        planted = {
            root / "session_not-ours" / "journal.log": b"this is somebody else's file\n",
            root / "session_orphan" / "lease.lock": b"",
            root / "notes.txt": b"keep me\n",
        }
        for path, data in planted.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return lambda: all(path.is_file() and path.read_bytes() == data for path, data in planted.items())


class WrappedLocalFactory(LocalFactory):
    wrap = True


class MemoryFactory:
    def __call__(self) -> SessionStore:
        return MemoryStore()

    def kill_holder(self, store: SessionStore, session: Session) -> None:
        session.abandon()


@pytest.mark.parametrize("kind", ["local", "checkpointing-local", "wrapped-local", "memory", "wrapped-memory"])
def test_the_contract_suite_passes_for_our_stores(kind: str, tmp_path: Path) -> None:
    factory: Any = {
        "local": lambda: LocalFactory(tmp_path),
        # a journal compacted as soon as its history is as long as its checkpoint: every few commits
        "checkpointing-local": lambda: LocalFactory(tmp_path, checkpoint_min_bytes=1),
        "wrapped-local": lambda: WrappedLocalFactory(tmp_path),
        "memory": MemoryFactory,
        "wrapped-memory": lambda: lambda: WrappingStore(MemoryStore()),
    }[kind]()
    report = run(factory)
    assert report.conformant, report.describe()
    assert [r.name for r in report.results] == list(CHECKS)
    not_applicable = {r.name for r in report.results if r.outcome == "not applicable"}
    assert not_applicable <= CAPABILITY_CHECKS  # the API checks always apply
    if kind.endswith("local"):
        assert not_applicable == {"an expired lease is fenced out"}  # flock leases do not expire: death ends them
        assert report.outcome(REPLAYABLE) == "pass"
    else:
        assert REPLAYABLE in not_applicable  # a memory store keeps no journal to replay
        assert "a torn final record is cut off" in not_applicable  # never "pass" without the capability


class ForgetfulStore(MemoryStore):
    """Broken on purpose: reading a session forgets its last commit."""

    def load(self, session_id: str) -> Any:
        return fold(self.records[session_id][:-1])


class DoubleLeaseStore(MemoryStore):
    """Broken on purpose: a second open of a held session is allowed."""

    def _lease(self, session_id: str) -> None:
        self.leases.add(session_id)


class CaseBlindStore(MemoryStore):
    """Broken on purpose: ids are taken as given, whatever they are."""

    def create(self, meta: dict[str, Any], spec_snapshot: bytes, **kwargs: Any) -> Any:
        session_id = kwargs.pop("session_id", None)
        if session_id is not None:
            self.records.pop(session_id, None)
            meta = {**meta, "session_id": session_id or "x"}
        return super().create(meta, spec_snapshot, **kwargs) if session_id is None else self._force(meta, spec_snapshot)

    def _force(self, meta: dict[str, Any], spec_snapshot: bytes) -> Any:
        from strands_durable.store.memory import MemorySession

        self.records[meta["session_id"]] = [
            {"seq": 0, "kind": "strands-durable-journal", "events": [{"type": "session", "meta": meta}]}
        ]
        self.snapshots[meta["session_id"]] = spec_snapshot
        return MemorySession(self, meta["session_id"], None)


@pytest.mark.parametrize(
    ("broken", "failing"),
    [
        (ForgetfulStore, "create, commit and reopen equal the fold"),
        (DoubleLeaseStore, "lease exclusion names the holder"),
        (CaseBlindStore, "ids: bad ones refused, chosen ones kept, UUID prefixes"),
    ],
)
def test_the_contract_suite_fails_a_broken_store(broken: type[MemoryStore], failing: str) -> None:
    report = run(broken)
    assert not report.conformant
    assert failing in {r.name for r in report.failures}, report.describe()


def test_a_check_that_raises_unexpectedly_is_a_failure_not_a_crash_of_the_suite() -> None:
    class Exploding(MemoryStore):
        def list(self) -> Any:
            raise RuntimeError("boom")

    report = run(Exploding)
    failed = {r.name: r.detail for r in report.failures}
    assert "list, resolve and delete" in failed and "RuntimeError: boom" in failed["list, resolve and delete"]


class ExpiringLeaseStore(MemoryStore):
    """Leases that expire on an injectable clock, and commits fenced by the lease's token (as an S3 store's)."""

    fenced = True

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.tokens: dict[str, tuple[int, float]] = {}  # session -> (token, expiry)
        self.next_token = itertools.count(1)

    def _lease(self, session_id: str) -> None:
        token, expiry = self.tokens.get(session_id, (0, -1.0))
        if session_id in self.leases and expiry > self.now:
            raise SessionInUse(session_id, 0, "memory", owner=f"token {token}")
        self.leases.add(session_id)
        self.tokens[session_id] = (next(self.next_token), self.now + 30.0)

    def holder(self, session_id: str) -> Any:
        token, expiry = self.tokens.get(session_id, (0, -1.0))
        live = session_id in self.leases and expiry > self.now
        return LeaseHolder(0, "memory", owner=f"token {token}") if live else None

    def open(self, session_id: str, **kwargs: Any) -> Any:
        session = super().open(session_id, **kwargs)
        return _Fenced(self, session)

    def create(self, meta: dict[str, Any], spec_snapshot: bytes, **kwargs: Any) -> Any:
        return _Fenced(self, super().create(meta, spec_snapshot, **kwargs))


class _Fenced(MemorySession):
    def __init__(self, store: ExpiringLeaseStore, inner: MemorySession) -> None:
        self.__dict__.update(inner.__dict__)
        self.token = store.tokens[inner.session_id][0]

    def commit(self, events: list[dict[str, Any]], **kwargs: Any) -> int:
        store = self.store
        if store.fenced and store.tokens[self.session_id][0] != self.token:  # type: ignore[attr-defined]
            raise SessionInUse(self.session_id, 0, "memory", owner="a newer lease holder")
        return super().commit(events, **kwargs)


class ExpiringFactory:
    def __init__(self, *, fenced: bool) -> None:
        self.fenced = fenced

    def __call__(self) -> SessionStore:
        store = ExpiringLeaseStore()
        store.fenced = self.fenced
        return store

    def expire_lease(self, store: SessionStore, session: Session) -> None:
        store.now += 60.0  # type: ignore[attr-defined]


def test_the_expired_lease_check_passes_for_a_fencing_store_and_fails_without_fencing() -> None:
    only = ["an expired lease is fenced out", "lease exclusion names the holder"]
    fencing = run(ExpiringFactory(fenced=True), only=only)
    assert fencing.conformant and fencing.outcome("an expired lease is fenced out") == "pass", fencing.describe()
    unfenced = run(ExpiringFactory(fenced=False), only=only)
    assert [r.name for r in unfenced.failures] == ["an expired lease is fenced out"], unfenced.describe()


class CredulousStore(LocalStore):
    """Broken on purpose: a store told a known prefix trusts its state without comparing the journal's bytes."""

    def knowing(self, known: Any) -> LocalStore:
        credulous = self

        class Trusting(LocalStore):
            def load(self, session_id: str, *, upto_seq: int | None = None) -> Any:
                return known.state if session_id == known.session_id else credulous.load(session_id)

        return Trusting(self.root)


class UnmeasuredStore(LocalStore):
    """Broken on purpose: its sessions say their journal is shorter than the records they appended."""

    def create(self, *args: Any, **kwargs: Any) -> Any:
        session = super().create(*args, **kwargs)
        session.journal_size = lambda: 0  # type: ignore[method-assign]
        return session


@pytest.mark.parametrize("broken", [CredulousStore, UnmeasuredStore])
def test_the_replayable_check_fails_a_store_that_replays_wrong(broken: type[LocalStore], tmp_path: Path) -> None:
    report = run(lambda: broken(tmp_path / "sessions"), only=[REPLAYABLE])
    assert report.outcome(REPLAYABLE) == "fail", report.describe()
