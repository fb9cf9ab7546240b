"""The store interface: sessions are created, opened (leased), committed to and closed, in commits not files.

Code above `store/` works through `SessionStore` and `Session`: whatever a face or an operation needs from a store
is there, and a store it is handed may be any implementation (local files, memory, S3, a wrapping one). The modules
above `store/` that do name an implementation, and why (tests/core/test_store_boundary.py holds this list):
- `cli/run.py` makes a `MemoryStore` for `--no-save-session`;
- `sdk/manager.py` and `sdk/importing.py` import a Strands `FileSessionManager` directory, which only a
  `LocalStore` can take in;
- `runner/s3_artifacts.py`, the `--out s3://` artifact sink, writes through the S3 store's bucket client;
- `testing/s3_server.py`, the local SeaweedFS server of the tests, makes its buckets with the S3 store's client;
- the fault kit takes its stores from one module, `faults/kit/stores.py` (a `LocalStore`, or an `S3Store` under
  `--strands-chaos-sessions`); every other module of it asks the `replayable` seam below (the journal's bytes, a
  session seeded from a prefix, the fold of a known prefix); its power, disk, compound and hostile classes fault
  the files of the `LocalStore` that module gives them;
- `testing/hostile_files.py` damages a `LocalStore` session's files on purpose (the hostile-file cases).
Each imports only the public store modules and names. docs/storage.md describes the contract;
`strands_durable.testing.store_contract` checks it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from strands_durable.crashpoints import CrashPoints
from strands_durable.errors import DurableError
from strands_durable.store.fileops import FileOps
from strands_durable.store.ids import resolve_session_id
from strands_durable.store.journal import JournalContents, frame_line, read_journal
from strands_durable.store.state import SessionState

__all__ = [
    "Finding",
    "Inspection",
    "JournalContents",
    "KnownJournal",
    "LeaseHolder",
    "Session",
    "SessionStore",
    "SessionSummary",
    "Severity",
    "Workspace",
    "frame_line",
    "read_journal_bytes",
]

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class SessionSummary:
    session_id: str
    workflow_name: str
    pattern: str
    status: str  # running, paused, completed, failed, idle; corrupt when it cannot be read (`reason` says why)
    stale: bool  # running, but no live process holds the lease
    reason: str | None
    created_at: str | None
    updated_at: str | None
    spec_path: str | None
    lease_until: float | None = None  # running under a lease that lapses on its own (S3): when, unless renewed

    @property
    def display_status(self) -> str:
        if self.status == "corrupt":  # a session that cannot be read: `reason` names the file and what is wrong
            return f"corrupt ({self.reason})"
        return "running (stale)" if self.stale else self.status


@dataclass(frozen=True)
class LeaseHolder:
    """Who holds a session's lease: a process (`pid` on `host`) or, for a store without processes to name, an
    opaque `owner` string. `started_at`: when it took the lease (epoch seconds), 0.0 where the store does not
    record it (S3's lease records when it lapses instead)."""

    pid: int
    host: str
    started_at: float = 0.0
    owner: str | None = None
    unit: str | None = None  # a unit lease (`SessionStore.unit_holders`): the unit and the holder's attempt
    attempt: int | None = None

    def describe(self) -> str:
        return self.owner if self.owner else f"pid {self.pid} on host {self.host}"


@dataclass(frozen=True)
class Finding:
    """One thing `inspect` found: `error` is a violation (`strands sessions check` exits 1), `warning` is not."""

    severity: Severity
    where: str
    detail: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.where}: {self.detail}"


@dataclass
class Inspection:
    """What a store can say about one session without leasing or changing it.

    `state` is the fold of the commit record (None when it cannot be read: then `findings` says why);
    `findings` covers the store's own storage (the commit record's integrity, derived files that disagree with
    it); checks of the histories themselves are the caller's (they do not depend on the store).
    """

    session_id: str
    state: SessionState | None
    findings: list[Finding] = field(default_factory=list)
    holder: LeaseHolder | None = None


@dataclass(frozen=True)
class Workspace:
    """Where a run of one session may write local files: tools' `scratch_dir` (None: the store offers none; a
    face may choose one, `RunOptions.scratch_dir`) and the file layer every such byte goes through."""

    scratch_dir: Path | None
    fileops: FileOps


@dataclass(frozen=True)
class KnownJournal:
    """A journal prefix of session `session_id` that the caller has already read as `open` would: `state` is the
    fold of exactly `data` (whole records, as `SessionStore.journal_bytes` returns them) and each of its
    conversations is valid as stored.

    A store `knowing` it reads a journal that begins with these very bytes by decoding, folding and validating
    only the records after them, onto a copy-on-write copy of `state`. The result is the one a new process would
    get (the fold is a function of the bytes, and the bytes are compared, not assumed); it lets the chaos kit
    resume hundreds of runs from one journal prefix without paying for the prefix each time.
    """

    session_id: str
    data: bytes
    state: SessionState


def read_journal_bytes(data: bytes, *, first_seq: int = 0) -> JournalContents:
    """Journal bytes (`SessionStore.journal_bytes`, or a prefix of them) read as `open` reads them: the whole valid
    records, how many bytes they fill and whether a torn tail follows (a bad record followed by good ones raises
    `CorruptSession`). `first_seq` > 0 reads a part of a journal starting at that record."""
    return read_journal("journal", data, first_seq=first_seq)


def _unsupported(store: object, what: str) -> Exception:
    from strands_durable.errors import Unsupported

    return Unsupported(f"{type(store).__name__} cannot {what} (it is not replayable)")


class Session(ABC):
    """An open, leased session. `commit` is the one way to change it; each call is one atomic commit point."""

    state: SessionState
    warnings: list[str]

    @property
    def session_id(self) -> str:
        return self.state.session_id

    @abstractmethod
    def commit(
        self,
        events: list[dict[str, Any]],
        *,
        path: str = "",
        durable: bool = True,
        synced: bool = False,
        wait: bool = True,
    ) -> int:
        """Append one commit record and return its seq (read it there: another thread may commit right after).
        `durable=False` skips the fsync: only for records that can be re-derived from durable ones (a prompt, a
        results message, a unit outcome read from its conversation); the next durable commit or `close` makes it
        durable too, since the record is one ordered log. `synced=True` marks the record as following a flush of
        everything derived (a sync mark). Raises StorageIOError (exit 12) naming the session and the cause when
        the store cannot write.

        `wait=False` (with `durable=True`) defers the fsync: the record is appended now, in order, and becomes
        durable in the background (records deferred meanwhile share one fsync); the caller must call
        `wait_durable` before anything outside the process acts on it or could show it. Its `store.after_commit`
        then says `durable=False`; the `Durable` event says when it is. With `durable=False` it neither fsyncs nor
        waits for the deferred commits before it, whereas a commit that waits (`wait=True`, the default) is a
        barrier. Stores whose commits are durable when they return ignore it."""

    def wait_durable(self, seq: int | None = None) -> None:
        """Block until every commit made so far (or up to `seq`) is durable: the barrier before an external
        effect. Raises what the commit would have raised when its deferred fsync failed (StorageIOError, exit
        12); the session then refuses further commits. A no-op for stores whose commits are durable when they
        return (memory, S3)."""
        return None

    @abstractmethod
    def spec_snapshot(self) -> bytes: ...

    def spec_snapshot_name(self) -> str:
        """Where the spec snapshot is kept, as an error message names it (a store with files: its path)."""
        return f"spec_snapshot.yaml of session {self.session_id}"

    @abstractmethod
    def abandon(self) -> None:
        """Let go as a crashed process would: no flush, no final record; only the lease is released."""

    @abstractmethod
    def close(self) -> None:
        """Flush the derived files, make everything durable and release the lease."""

    def _emit_commit(
        self,
        crash: CrashPoints,
        site: str,
        path: str,
        events: list[dict[str, Any]],
        *,
        durable: bool,
        synced: bool,
        seq: int = 0,
    ) -> None:
        """The `Commit` crash point every store emits around a commit: `store.before_commit`, then
        `store.after_commit` with the commit's own `seq`."""
        crash.emit(site, path, durable=durable, synced=synced, records=events, state=self.state, seq=seq)

    def refresh_views(self) -> list[str]:
        """Write again every derived (readable) file that disagrees with the commit record, as `sessions repair`
        does; returns what was rewritten (nothing for a store without derived files)."""
        return []

    def journal_size(self) -> int:
        """(`replayable` stores) How many bytes of `SessionStore.journal_bytes` the session's records fill now, as a
        process that died this instant would leave them: every record appended (local: in the page cache), none
        that is only held in memory (S3: a `durable=False` record before its PUT)."""
        raise _unsupported(self, "measure its journal")

    def stored_seq(self) -> int:
        """(`replayable` stores) The last record a process that died this instant leaves for a resume (every record
        up to it fills the first `journal_size()` bytes): local, the last record appended; S3, the last record
        PUT (the held ones after it are lost, as unsynced lines on disk)."""
        raise _unsupported(self, "measure its journal")

    def backup_of(self, conversation: str) -> str | None:
        """Where the previous generation of `conversation` was kept by the latest `generation` commit (None for
        a store that keeps none)."""
        return None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SessionStore(ABC):
    unit_leases: bool = False
    """Whether `open_unit` works: units of one run may then commit from several processes at once."""

    replayable: bool = False
    """Whether a session can be replayed from its journal (docs/storage.md, "Replaying a session"): its durable
    records as journal bytes (`journal_bytes`, and `Session.journal_size` to measure them at any moment), a
    session seeded from a prefix of another's (`seed`), and a store that folds only what follows a prefix it is
    told (`knowing`). The chaos kit needs it; the contract suite checks it."""

    @abstractmethod
    def create(
        self,
        meta: dict[str, Any],
        spec_snapshot: bytes,
        *,
        crash_points: CrashPoints | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Create and lease a new session. Its id is `session_id` (or `meta["session_id"]`) when given, a new
        UUID otherwise; a given id must follow `ids.ID_RULE` and differ from every existing id in more than
        letter case (UsageError, exit 2). On an I/O failure nothing is left behind, or a session that `list`,
        `resolve` and `delete` see."""

    @abstractmethod
    def open(self, session_id: str, *, crash_points: CrashPoints | None = None, check: bool = True) -> Session:
        """Lease and recover a session for running. Raises SessionNotFound, SessionInUse, CorruptSession.

        `check=False` skips verifying derived files and stored histories (for `sessions repair`, which
        exists to fix them); the commit record is always verified.
        """

    def open_unit(
        self,
        session_id: str,
        *,
        unit: str,
        attempt: int,
        crash_points: CrashPoints | None = None,
        check: bool = True,
    ) -> Session:
        """Open a session to run one unit of it (`unit`, attempt number `attempt` of the engine that schedules it)
        under that unit's lease, while sibling units commit from other processes (only where `unit_leases`;
        docs/storage.md, "Leases and fencing"). A store without it raises Unsupported: its runs hold the session's
        lease, and their units commit one at a time."""
        from strands_durable.errors import Unsupported

        raise Unsupported(f"{type(self).__name__} has no unit leases (concurrent units of one run need sessions on S3)")

    @abstractmethod
    def load(self, session_id: str) -> SessionState:
        """Read a session without leasing it or writing anything (show, export, check)."""

    @abstractmethod
    def session_ids(self) -> list[str]:
        """The ids of every session this store holds (never a directory or object it cannot read as its own)."""

    @abstractmethod
    def list(self) -> list[SessionSummary]:
        """Every session, newest first, as its commit record says (a derived file never overrides it)."""

    @abstractmethod
    def delete(self, session_id: str) -> None:
        """Delete a session (takes the lease first: SessionInUse while a live process holds it)."""

    def finish_interrupted_deletes(self, failed: list[tuple[str, DurableError]] | None = None) -> list[str]:
        """Finish the deletes that were cut short and left a session no command lists; the ids finished (a store
        whose interrupted delete leaves a session that is still listed and deleted again has none). One that
        cannot be finished (permission denied, a disk error) raises its error, or, given `failed`, is added there
        as (id, error) while the others are finished: one stuck leftover never blocks every later delete."""
        return []

    @abstractmethod
    def holder(self, session_id: str) -> LeaseHolder | None:
        """The live holder of the session's lease, or None when nobody holds it (a dead holder holds nothing)."""

    def unit_holders(self, session_id: str) -> list[LeaseHolder]:
        """The live holders of the session's unit leases (`open_unit`), by unit; none where `unit_leases` is
        False."""
        return []

    def resolve(self, id_or_prefix: str) -> str:
        """The full id for a full id or a unique prefix of at least 8 characters of a UUID id (SessionNotFound
        or UsageError otherwise)."""
        return resolve_session_id(id_or_prefix, self.session_ids())

    def inspect(self, session_id: str) -> Inspection:
        """What `sessions check` reports about the store's own storage (reads only, takes no lease)."""
        return Inspection(session_id, self.load(session_id), [], self.holder(session_id))

    def workspace(self, session_id: str) -> Workspace:
        """Where a run of this session writes local files (tools' scratch directory) and through which layer."""
        return Workspace(scratch_dir=None, fileops=FileOps())

    # -- replaying (`replayable` stores) ------------------------------------------------------------------------
    def journal_bytes(self, session_id: str) -> bytes:
        """The session's durable records as journal lines (`<crc32> <json>\n`: the header, then the records; a
        compacted session's checkpoint record after its header), as a new process would read them. A prefix cut
        at `Session.journal_size` taken at some moment holds what was durable then; `read_journal_bytes` reads
        it."""
        raise _unsupported(self, "give its journal")

    def spec_snapshot_bytes(self, session_id: str) -> bytes:
        """The spec snapshot the session was created with, read without taking its lease."""
        raise _unsupported(self, "give a spec snapshot")

    def seed(self, session_id: str, *, header: dict[str, Any], tail: bytes, spec_snapshot: bytes) -> bytes:
        """Write session `session_id` as a process that died after committing `tail` would have left it: `header`
        (a header record, as `read_journal_bytes` returns it; its meta names `session_id`) followed by `tail`
        (whole records taken from another session's `journal_bytes`), and its spec snapshot. Nothing more is
        derived, as after a crash (a harness's scratch copy: nothing is fsynced). Returns the journal's bytes as
        `journal_bytes` will give them."""
        raise _unsupported(self, "seed a session")

    def knowing(self, known: KnownJournal) -> SessionStore:
        """A store over the same storage that reads session `known.session_id`, when its journal begins with
        `known.data`, by folding only the records after it onto a copy of `known.state`."""
        raise _unsupported(self, "take a known journal")
