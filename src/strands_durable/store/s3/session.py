"""An open session on S3: each commit one immutable object at the next sequential key, created with
If-None-Match: * so a lost race is detected and nothing is overwritten; compaction into checkpoint objects.

Fencing: a process that takes over an expired lease first writes a fence record at the next commit number and
only then uses the state. The previous holder's next commit targets that very key (or an earlier one it already
lost), gets 412, reads what is there and stops with SessionFenced (exit 17). Fence objects are never deleted by
compaction, so the key a fenced writer aims at always exists; other commit objects are deleted only after a
checkpoint covering them exists, and a key below the latest checkpoint is never read again.

Several writers: a session opened for one unit of a run (`S3Store.open_unit`) holds only that unit's lease and
appends optimistically next to its siblings' writers; a lost race folds their records and retries at the next key.
A unit writer is fenced only by a fence for its own unit or by a session-wide one; a session-wide writer only by a
session-wide one (docs/storage.md, "Leases and fencing", has the argument for several writers).
"""

from __future__ import annotations

import threading
from typing import Any, NoReturn

from strands_durable.crashpoints import CrashPoints
from strands_durable.errors import SessionFenced, SessionNotFound, StorageIOError
from strands_durable.store.base import Session
from strands_durable.store.fileops import FileOps
from strands_durable.store.journal import Line, encode_line, utc_now
from strands_durable.store.s3.client import KeyTaken
from strands_durable.store.s3.compaction import Compaction, fenced_by, fences_out
from strands_durable.store.s3.lease import S3Lease
from strands_durable.store.s3.scratch import SAVE_KINDS, ScratchMirror
from strands_durable.store.s3.stored import SessionReader, StoredSession
from strands_durable.store.state import SessionState, apply_record, compact_events, fold, restore, snapshot
from strands_durable.store.verify import check_committed_histories
from strands_durable.store.views import dump, session_view

# commits whose events change what `sessions list` shows refresh the session's view object
VIEW_KINDS = frozenset({"session", "status", "artifact", "variables", "generation", "unit"})


def view_bytes(state: SessionState) -> bytes:
    return dump(session_view(state))


def pending_view_bytes(session_id: str) -> bytes:
    """The view `create` writes before the session's header commit, so that a crash between the two leaves the
    session listed; `list` confirms such a view by reading the commits (it claims nothing they do not hold)."""
    return dump({"session_id": session_id, "pending": True})


def fence(lease: S3Lease, replaced: str | None, *, deleted: bool = False, unit: str | None = None) -> dict[str, Any]:
    """A fence record's `fence` field: who fenced (our lease token), whom it replaces, and whether the session was
    deleted (the fences a delete keeps refuse a paused writer's next commit; see S3Store.delete). A unit fence
    names its unit and the attempt that took the unit's lease: it fences only that unit's earlier holders."""
    import os
    import socket

    record: dict[str, Any] = {"holder": lease.token, "replaces": replaced}
    record.update(pid=os.getpid(), host=socket.gethostname())
    if unit is not None:
        record.update(unit=unit, attempt=lease.attempt)
    return {**record, "deleted": True} if deleted else record


class S3Session(Session):
    def __init__(
        self,
        store: SessionReader,
        stored: StoredSession,
        lease: S3Lease,
        crash_points: CrashPoints | None,
        *,
        unit: str | None = None,
    ) -> None:
        self.store = store
        self.unit = unit  # a unit writer (S3Store.open_unit): never compacts, fenced as described above
        self.state = stored.state
        self.warnings: list[str] = []
        self._records = stored.records  # each landed record (its line) since the checkpoint, in order
        self._held: list[Line] = []  # records of durable=False commits, folded, PUT with the next commit
        self._held_events: list[list[dict[str, Any]]] = []  # the events each held record was made of
        self._held_kinds: set[Any] = set()
        self._compaction = Compaction(store, self.session_id, stored)
        self._lease = lease
        self._crash = crash_points or CrashPoints()
        self._lock = threading.RLock()
        self._closed = False
        self.scratch = ScratchMirror(
            store.objects,
            store.keys.session(self.session_id),
            store.scratch_dir(self.session_id),
            FileOps(),
            token=lease.token,
            manifest=stored.scratch,
        )

    @property
    def lease_token(self) -> str:
        return self._lease.token

    def journal_size(self) -> int:
        """Bytes of `S3Store.journal_bytes` the landed records fill: held records are not in the bucket yet (a
        process that died now loses them, as unsynced lines on disk)."""
        # no lock: crash points of other threads ask while a commit holds it (a lockstep schedule would deadlock)
        return self._compaction.head_size + sum(len(line.data) for line in list(self._records))

    def stored_seq(self) -> int:
        landed = self._records[-1:]
        return landed[0].seq if landed else self._compaction.checkpoint_seq

    # -- commits --------------------------------------------------------------------------------------
    def commit(
        self,
        events: list[dict[str, Any]],
        *,
        path: str = "",
        durable: bool = True,
        synced: bool = False,
        wait: bool = True,
    ) -> int:
        """One conditional PUT, which also carries the records of the `durable=False` commits held since the
        last one (docs/storage.md#deferred-commits-and-the-barrier: those are re-derived, so a crash may lose them,
        as it loses unsynced journal lines on disk); `durable=False` alone PUTs nothing (without `batch`: every
        commit is a PUT). Returns the seq."""
        with self._lock:
            if self._closed:
                raise StorageIOError(f"session {self.session_id} is closed")
            self._lease.ensure()
            self._emit_commit(self._crash, "store.before_commit", path, events, durable=durable, synced=synced)
            extra: dict[str, Any] = {"synced": True} if synced else {}
            kinds = {event.get("type") for event in events} | self._held_kinds
            if not durable and not synced and self.store.batch:
                seq = self._hold(events)
                self._held_kinds = kinds
            else:
                # the files a tool wrote are stored before the commit that follows it, which names them
                files = self.scratch.save() if kinds & SAVE_KINDS else None
                if files is not None:
                    extra["scratch"] = files
                try:
                    seq = self._append(events, extra)
                except SessionFenced:
                    self.scratch.abandon()
                    raise
                self.scratch.settle()
                self._held_kinds = set()
            if self.store.strict:
                check_committed_histories(self.state, events)
            if not self._held:
                self._derive(write_view=bool(kinds & VIEW_KINDS) or synced)
            self._emit_commit(self._crash, "store.after_commit", path, events, durable=durable, synced=synced, seq=seq)
            return seq

    def _derive(self, *, write_view: bool) -> None:
        """What follows a landed commit: the view, a due checkpoint. Either may fail without failing the commit
        (it is durable): the view then lags until the next one, compaction waits for a later commit, and a lost
        lease is reported by the next commit."""
        try:
            if write_view:
                self.write_view()
            if self.unit is None and self._compaction.due(self.state.seq):
                self.compact()
        except (StorageIOError, SessionFenced):
            pass

    def _encode(self, events: list[dict[str, Any]], extra: dict[str, Any], state: SessionState | None = None) -> Line:
        """The record that follows `state` (default: ours), its positions as changes to that state's."""
        state = self.state if state is None else state
        record = {
            "seq": state.seq + 1,
            "at": utc_now(),
            "events": compact_events(state, events),
            "writer": self._lease.token,
            **extra,
        }
        return encode_line(record)

    def _hold(self, events: list[dict[str, Any]]) -> int:
        """A `durable=False` commit: its record is folded now and PUT with the next commit's."""
        line = self._encode(events, {})
        apply_record(self.state, line.record)
        self._held.append(line)
        self._held_events.append(events)
        return line.seq

    def _append(self, events: list[dict[str, Any]], extra: dict[str, Any]) -> int:
        """PUT the held records and this one as one object at the first one's key; on a lost race read what is
        there, stop if it fences us out, else fold it and try the next key."""
        while True:
            line = self._encode(events, extra)
            first = (self._held[0] if self._held else line).seq
            body = b"".join(held.data for held in self._held) + line.data
            try:
                self.store.objects.put_immutable(self.store.keys.commit(self.session_id, first), body)
            except KeyTaken:
                self._catch_up()
                continue
            if self.unit is not None:
                self._confirm_uncovered(first)
            for held in self._held:
                self._landed(held)
            self._held, self._held_events = [], []
            self._apply(line)
            return line.seq

    def _confirm_uncovered(self, seq: int) -> None:
        """After a unit writer's PUT at `seq` landed: SessionFenced if a checkpoint covers `seq` (one LIST). A
        session-wide writer compacts only once no unit writer is live, so this happens only to a unit writer paused
        between its lease check and its PUT past a takeover: its key, a sibling's record, was compacted and freed,
        and the record it just put there is one no reader will ever read (docs/storage.md, "Unit leases")."""
        keys = self.store.keys
        after = keys.checkpoint(self.session_id, seq - 1)
        covering = next(iter(self.store.objects.list(keys.checkpoints(self.session_id), start_after=after)), None)
        if covering is not None:
            raise SessionFenced(
                self.session_id,
                f"commit {seq} landed below checkpoint {keys.seq_of(covering.key)}: the session went on without it",
            )

    def _apply(self, line: Line) -> None:
        # fold what was written, not the caller's objects (as the local store does)
        apply_record(self.state, line.record)
        self._landed(line)

    def _landed(self, line: Line) -> None:
        self._records.append(line)
        self.scratch.track(line.record)

    def _catch_up(self) -> None:
        """Fold the records other writers committed after ours; SessionFenced if one fences us out (see
        `fences_out`), or if the session was deleted (its fences refused our PUT); then the scratch files we saved
        for the refused commit are removed, so a deleted session is not brought back piecemeal. Held records
        (already folded) move after the others' and are folded again there, renumbered, so that our state, each
        message's seq and each position are what a reader folds from the bucket.

        The records after our last landed one are read alone (`S3Store.read_after`: one LIST and a GET per new
        commit object); only when that cannot tell (a compaction or a delete removed keys) is the whole session
        read and checked against what we know (`Compaction.unseen`)."""
        last = self._compaction.checkpoint_seq + len(self._records)
        others = self.store.read_after(self.session_id, last)
        state = self._state_at_last_landed() if others is not None and self._held else None
        if others is None or (self._held and state is None):
            stored = self._read_all()
            others = self._compaction.unseen(stored, self._records, self._lease.token, self.unit)
            state = stored.state
        elif state is not None:
            for line in others:
                apply_record(state, line.record)
        for line in others:
            found = line.record.get("fence")
            if found is not None and found.get("deleted"):
                self._session_deleted()
            if found is not None and fences_out(found, self._lease.token, self.unit):
                raise fenced_by(self.session_id, line.seq, found)
        if not self._held:
            for line in others:
                self._apply(line)
            return
        assert state is not None
        for line in others:
            self._landed(line)
        held = self._held_events
        self._held, self._held_events = [], []
        for events in held:
            line = self._encode(events, {}, state)
            apply_record(state, line.record)
            self._held.append(line)
            self._held_events.append(events)
        restore(self.state, snapshot(state))  # in place: the runner holds this very object
        self.state.seq, self.state.updated_at = state.seq, state.updated_at

    def _read_all(self) -> StoredSession:
        try:
            return self.store.read(self.session_id)
        except SessionNotFound:
            self._session_deleted()

    def _session_deleted(self) -> NoReturn:
        prefix = self.store.keys.scratch(self.session_id)
        self.store.objects.delete_many([listed.key for listed in self.store.objects.list(prefix)])
        raise SessionFenced(self.session_id, "the session was deleted") from None

    def _state_at_last_landed(self) -> SessionState | None:
        """Our state without the held records: our checkpoint (one GET) and our records since, folded. None when
        the checkpoint is gone (a newer one replaced it)."""
        checkpoint = self._compaction.read_own_checkpoint()
        if checkpoint is None:
            return None
        return fold([*checkpoint, *(line.record for line in self._records)])

    def write_fence(self, replaced: str | None) -> None:
        """The first commit after taking over a lease: fences out every earlier holder (of the session, or of
        our unit). A fence is always an object of its own, at its own seq's key (compaction keeps fence keys), so
        nothing may be held here."""
        with self._lock:
            assert not self._held, "a fence never rides with held records"
            self._append([], {"fence": fence(self._lease, replaced, unit=self.unit)})

    # -- checkpoints (store/s3/compaction.py) ------------------------------------------------------------
    def compact(self) -> None:
        """Checkpoint the state so far, then delete the commit objects it covers (fences excepted) and the older
        checkpoint. Only a session-wide lease holder compacts; the lease is renewed first."""
        with self._lock:
            if self.unit is not None:
                return  # a unit writer's siblings append meanwhile: compaction waits for a session-wide writer
            self._lease.renew()
            self._lease.ensure()
            self._records = self._compaction.write(self.state, self._records, self.scratch.manifest)

    def verify_stored(self) -> None:
        """A strict store's read-back (store/s3/compaction.py, `Compaction.verify`)."""
        self._compaction.verify(self._records)

    # -- views and lifecycle --------------------------------------------------------------------------
    def write_view(self) -> None:
        """The session's readable summary (what `sessions list` reads); written after the commits it describes."""
        self.store.objects.put(self.store.keys.view(self.session_id), view_bytes(self.state))

    def spec_snapshot(self) -> bytes:
        return self.store.spec_snapshot(self.session_id)

    def abandon(self) -> None:
        """As a crashed process would: no final record, no view; only the lease is released."""
        with self._lock:
            self._closed = True
            self._lease.release()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            try:
                if self._lease.lost is None:
                    self.commit([], path="close", synced=True)
                    if self.store.strict:
                        self.verify_stored()
            finally:
                self._closed = True
                self._lease.release()
