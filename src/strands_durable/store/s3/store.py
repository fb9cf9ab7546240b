"""S3Store: sessions in an S3 bucket (any S3-compatible server), addressed as `s3://BUCKET/PREFIX`.

Opening a session reads one LIST page (per 1,000 of its keys), its latest checkpoint and at most `checkpoint_every`
commit objects after it, those this process has not read before (store/s3/cache.py; a session-wide open also LISTs
its units' leases: docs/storage.md, "Unit leases", and "Requests").
`list` reads the LIST pages of views and of leases plus one small view object per session:
ceil(N/1000) + ceil(L/1000) + N requests for N sessions with L live or stale leases (units' leases included).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import strands_durable.store.events as event_kinds
from strands_durable.crashpoints import CrashPoints
from strands_durable.errors import CorruptSession, SessionExists, SessionInUse, SessionNotFound, UsageError
from strands_durable.store.base import Finding, Inspection, LeaseHolder, SessionStore, SessionSummary, Workspace
from strands_durable.store.fileops import FileOps
from strands_durable.store.ids import could_be_prefix, is_session_id, is_uuid, new_session_meta
from strands_durable.store.journal import HEADER_KIND, CorruptLine, Line, decode_line, encode_line, read_journal
from strands_durable.store.journal import utc_now as record_time
from strands_durable.store.s3.client import KeyTaken, Listed, Objects, make_client
from strands_durable.store.s3.compaction import digest, read_checkpoint
from strands_durable.store.s3.keys import Keys
from strands_durable.store.s3.lease import DEFAULT_SKEW_S, DEFAULT_TTL_S, LeaseRecord, S3Lease
from strands_durable.store.s3.scratch import apply_delta
from strands_durable.store.s3.session import S3Session, fence, pending_view_bytes, view_bytes
from strands_durable.store.s3.stored import StoredSession
from strands_durable.store.state import SCHEMA_VERSION, SessionState, copy_state, fold
from strands_durable.store.verify import SNAPSHOT_DIFFERS, SNAPSHOT_MISSING, spec_snapshot_matches, verify_histories

if TYPE_CHECKING:
    from strands_durable.store.base import KnownJournal

CHECKPOINT_EVERY = 64
_READ_ATTEMPTS = 5  # a read that races a compaction (a listed commit deleted before its GET) is read again


def parse_url(url: str) -> tuple[str, str]:
    """`s3://BUCKET/PREFIX` -> (bucket, prefix). UsageError naming the value when it is not one."""
    if not url.startswith("s3://"):
        raise UsageError(f"Not an S3 sessions location: {url} (expected s3://BUCKET/PREFIX)")
    bucket, _, prefix = url[len("s3://") :].partition("/")
    if not (3 <= len(bucket) <= 63) or not all(c.islower() or c.isdigit() or c in ".-" for c in bucket):
        raise UsageError(f"Not a valid S3 bucket name in {url}: {bucket!r} (3-63 lowercase letters, digits, '.', '-')")
    return bucket, prefix.strip("/")


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    if not value:
        return default
    try:
        return float(value)
    except ValueError:
        raise UsageError(f"{name} must be a number of seconds, not {value!r}") from None


class S3Store(SessionStore):
    unit_leases = True  # units of one run may be open on several workers at once (`open_unit`)
    replayable = True  # its objects hold journal lines: their bytes, a seeded prefix, a known prefix

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        client: Any = None,
        lease_ttl_s: float | None = None,
        lease_skew_s: float | None = None,
        checkpoint_every: int = CHECKPOINT_EVERY,
        keep_history: bool = False,
        retry_delays: tuple[float, ...] | None = None,
        strict: bool | None = None,
        batch: bool = True,
        clock: Callable[[], float] = time.time,
        scratch_root: Path | str | None = None,
    ) -> None:
        """`client`: a boto3 S3 client or anything with its methods (a counting or faulting wrapper); default
        one built from the standard AWS configuration. Lease TTL and skew default to STRANDS_S3_LEASE_TTL /
        STRANDS_S3_LEASE_SKEW, else 30 s and 5 s. `keep_history`: checkpoints are written every
        `checkpoint_every` commits as usual (reads stay bounded) but the commit objects they cover are not deleted,
        so `journal_bytes` and `load(upto_seq=)` still reach every record (the chaos kit's stores).
        `scratch_root`: where this machine keeps the sessions' scratch directories (default STRANDS_S3_SCRATCH_DIR,
        else a directory per bucket and prefix under the system's temporary directory); their files are saved with
        the session (store/s3/scratch.py)."""
        self.bucket = bucket
        self.keys = Keys.under(prefix)
        self.url = f"s3://{bucket}/{self.keys.prefix}"
        self.strict = strict if strict is not None else os.environ.get("STRANDS_DURABLE_STRICT", "") not in ("", "0")
        kwargs: dict[str, Any] = {} if retry_delays is None else {"retry_delays": retry_delays}
        self.objects = Objects(client if client is not None else make_client(), bucket, **kwargs)
        self.lease_ttl_s = lease_ttl_s if lease_ttl_s is not None else _env_float("STRANDS_S3_LEASE_TTL", DEFAULT_TTL_S)
        self.lease_skew_s = (
            lease_skew_s if lease_skew_s is not None else _env_float("STRANDS_S3_LEASE_SKEW", DEFAULT_SKEW_S)
        )
        self.checkpoint_every = checkpoint_every
        self.keep_history = keep_history  # compaction writes checkpoints and deletes no commit object
        self.batch = batch  # durable=False commits are PUT with the next commit (store/s3/session.py)
        self.clock = clock  # wall-clock seconds: lease expiry (tests move it forward)
        if scratch_root is None:
            digest = hashlib.sha256(self.url.encode()).hexdigest()[:16]
            default = Path(tempfile.gettempdir()) / "strands-durable-s3" / digest
            scratch_root = os.environ.get("STRANDS_S3_SCRATCH_DIR") or default
        self.scratch_root = Path(scratch_root).expanduser()
        self._known: KnownJournal | None = None  # `knowing`: a prefix whose records are not folded again
        # session id -> the view's bytes `resolve` just read: `open` leaves that view be when it would write the same
        self._views_read: dict[str, bytes] = {}

    @classmethod
    def from_url(cls, url: str, **opts: Any) -> S3Store:
        bucket, prefix = parse_url(url)
        known = {
            "client",
            "lease_ttl_s",
            "lease_skew_s",
            "checkpoint_every",
            "keep_history",
            "retry_delays",
            "strict",
            "batch",
            "clock",
            "scratch_root",
        }
        return cls(bucket, prefix, **{name: value for name, value in opts.items() if name in known})

    def __repr__(self) -> str:
        return f"S3Store({self.url!r})"

    # -- reading --------------------------------------------------------------------------------------
    def _where(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def read(
        self, session_id: str, *, upto_seq: int | None = None, from_header: bool = False, fresh: bool = False
    ) -> StoredSession:
        """Every record of a session: the latest checkpoint and the commit objects after it (its `state` folded
        up to record `upto_seq` when given: CorruptSession when a checkpoint covers that record and its history
        was not kept). `from_header`: every record from the header on where the history was kept. `fresh`: every
        object fetched, none taken from this process's cache (a strict writer's read-back)."""
        for _attempt in range(_READ_ATTEMPTS):
            stored = self._read_once(session_id, upto_seq, from_header, fresh)
            if stored is not None:
                return stored
        raise CorruptSession(self._where(self.keys.session(session_id)), "commit objects keep vanishing while read")

    def _read_once(
        self, session_id: str, upto_seq: int | None, from_header: bool = False, fresh: bool = False
    ) -> StoredSession | None:
        keys = self.keys
        commits: dict[int, Listed] = {}
        checkpoints: dict[int, Listed] = {}
        listing = list(self.objects.list(keys.session(session_id)))
        for listed in listing:
            seq = keys.seq_of(listed.key)
            if seq is None:
                continue
            if listed.key.startswith(keys.commits(session_id)):
                commits[seq] = listed
            elif listed.key.startswith(keys.checkpoints(session_id)):
                checkpoints[seq] = listed
        if not commits and not checkpoints:
            raise SessionNotFound(session_id)
        records: list[Line] = []
        parsed: list[dict[str, Any]] = []
        fences: dict[int, dict[str, Any]] = {}
        header, checkpoint_digest, scratch, head_size = b"", "", None, 0
        checkpoint_seq = max(checkpoints, default=-1)
        kept = 0 in commits  # the header's object is there: the history before the checkpoint was kept
        if kept and (from_header or (upto_seq is not None and upto_seq < checkpoint_seq)):
            checkpoint_seq = -1  # read the kept history, not the checkpoint (record `upto_seq` is in it)
        if checkpoint_seq >= 0:
            (held,) = self.objects.get_immutable([checkpoints[checkpoint_seq]], fresh=fresh)
            if held is None:
                return None
            base = read_checkpoint(self._where(checkpoints[checkpoint_seq].key), held[0], checkpoint_seq)
            parsed, fences, header, scratch = base.records, base.fences, base.header, base.scratch
            checkpoint_digest, head_size = digest(held[0]), len(held[0])
            if kept and self.keep_history:
                head_size = sum(item.size for seq, item in commits.items() if seq <= checkpoint_seq)
        # a commit object holds one record, or several (durable=False commits PUT with the next one): the next
        # object's key is the seq after its last record, so every key above the checkpoint is read, then chained
        chained = self._chain(commits, checkpoint_seq, fresh=fresh)
        if chained is None:
            return None  # compacted between our LIST and GET
        seq, later, chained_parsed, records = chained
        parsed.extend(chained_parsed)
        if later and self._deleted(commits[max(later)].key):
            raise SessionNotFound(session_id)  # only the fences of a deleted session (and a paused writer's strays)
        if later:
            raise CorruptSession(self._where(keys.commit(session_id, seq)), f"missing while commit {min(later)} exists")
        fences.update((record["seq"], record["fence"]) for record in parsed if "fence" in record)
        if any(fence.get("deleted") for fence in fences.values()):
            raise SessionNotFound(session_id)
        if not parsed:
            raise CorruptSession(self._where(keys.commits(session_id)), "no complete header record")
        if parsed[0].get("kind") != HEADER_KIND:
            raise CorruptSession(self._where(keys.commit(session_id, 0)), "first record is not a session header")
        if upto_seq is not None and checkpoint_seq > upto_seq:
            raise CorruptSession(self._where(keys.session(session_id)), f"record {upto_seq} is in a checkpoint")
        try:
            state = self._fold(session_id, parsed, records if checkpoint_seq < 0 else None, upto_seq)
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptSession(self._where(keys.session(session_id)), f"a record does not apply: {exc}") from exc
        leftovers = [item.key for s, item in commits.items() if s <= checkpoint_seq and s not in fences]
        leftovers = [] if self.keep_history else leftovers
        leftovers += [item.key for s, item in checkpoints.items() if s < checkpoint_seq]
        for record in parsed[len(parsed) - len(records) :]:
            scratch = apply_delta(scratch, record.get("scratch"))
        header = header or records[0].data
        found = (header, records, state, fences, checkpoint_seq, checkpoint_digest, leftovers, scratch, head_size)
        return StoredSession(*found, listing=listing)

    def _fold(
        self, session_id: str, parsed: list[dict[str, Any]], lines: list[Line] | None, upto_seq: int | None
    ) -> SessionState:
        """The fold of `parsed` (up to record `upto_seq`); onto a copy of the known state (`knowing`) when `lines`,
        the session's whole journal, begin with the known prefix's very bytes."""
        if upto_seq is not None:
            parsed = [record for record in parsed if record["seq"] <= upto_seq]
        known = self._known
        if known is not None and known.session_id == session_id and lines is not None:
            count = known.state.seq + 1  # records 0..seq
            if len(parsed) >= count and b"".join(line.data for line in lines[:count]) == known.data:
                return fold(parsed[count:], copy_state(known.state))
        return fold(parsed)

    # -- replaying (`SessionStore.replayable`) ------------------------------------------------------------------
    def journal_bytes(self, session_id: str) -> bytes:
        """The checkpoint object (a header and a checkpoint record), when there is one, then every record after
        it: the local journal's form. A store that keeps the history (`keep_history`) gives every record from the
        header on, checkpoints or not: what a harness cuts at `journal_size()` offsets."""
        self._check_id(session_id)
        stored = self.read(session_id, from_header=self.keep_history)
        head = b""
        if stored.checkpoint_seq >= 0:
            key = self.keys.checkpoint(session_id, stored.checkpoint_seq)
            listed = [item for item in stored.listing or () if item.key == key] or [Listed(key, 0.0, 0)]
            (held,) = self.objects.get_immutable(listed)  # read with the session: remembered then
            if held is None:  # compacted again meanwhile
                return self.journal_bytes(session_id)
            head = held[0]
        return head + b"".join(line.data for line in stored.records)

    def spec_snapshot_bytes(self, session_id: str) -> bytes:
        self._check_id(session_id)
        return self.spec_snapshot(session_id)

    def seed(self, session_id: str, *, header: dict[str, Any], tail: bytes, spec_snapshot: bytes) -> bytes:
        """The spec snapshot, the header and the tail as one commit object at `commits/0` (a reader chains it as it
        chains held records: the next key is the seq after its last record), then the session's view (folded from
        the bytes written, not read back): three PUTs."""
        self._check_id(session_id)
        head = encode_line(header)
        journal = head.data + tail
        contents = read_journal(self._where(self.keys.commits(session_id)), journal)
        if contents.torn_tail:
            raise CorruptSession(self._where(self.keys.commit(session_id, 0)), "the tail is not whole records")
        self.objects.put(self.keys.spec_snapshot(session_id), spec_snapshot)
        self.objects.put_immutable(self.keys.commit(session_id, 0), journal)
        self.objects.put(self.keys.view(session_id), view_bytes(fold(contents.records)))
        return journal

    def knowing(self, known: KnownJournal) -> S3Store:
        twin = copy.copy(self)
        twin._known, twin._views_read = known, {}
        return twin

    def _chain(
        self, commits: dict[int, Listed], after: int, *, fresh: bool = False
    ) -> tuple[int, list[int], list[dict[str, Any]], list[Line]] | None:
        """GET the commit objects listed above seq `after` and follow their chain from `after + 1`: the seq after
        its last record, the listed seqs beyond it (a gap: none for a whole session), the records parsed and as
        bytes. None when a listed object vanished before its GET (a compaction's delete)."""
        above = sorted(s for s in commits if s > after)
        fetched = dict(zip(above, self.objects.get_immutable([commits[s] for s in above], fresh=fresh), strict=True))
        parsed: list[dict[str, Any]] = []
        records: list[Line] = []
        seq = after + 1
        while seq in fetched:
            held = fetched.pop(seq)
            if held is None:
                return None
            where = self._where(commits[seq].key)
            contents = read_journal(where, held[0], first_seq=seq, lines=True)
            if contents.torn_tail or not contents.records or contents.lines is None:
                raise CorruptSession(where, "not exactly one whole commit record")
            parsed.extend(contents.records)
            records.extend(contents.lines)
            seq += len(contents.records)
        return seq, [s for s in fetched if s > seq], parsed, records

    def read_after(self, session_id: str, seq: int) -> list[Line] | None:
        """The records committed after record `seq`, for a writer whose last landed record it is: one LIST of the
        commit keys after its key and a GET of each (no checkpoint, nothing before). None when this short read
        cannot tell (no commit `seq + 1`, a gap in the chain, an object deleted while read: a compaction or a
        delete happened); the caller then reads the whole session."""
        after = self.keys.commit(session_id, seq)
        commits = {}
        for listed in self.objects.list(self.keys.commits(session_id), start_after=after):
            found = self.keys.seq_of(listed.key)
            if found is not None:
                commits[found] = listed
        if seq + 1 not in commits:
            return None
        chained = self._chain(commits, seq)
        if chained is None or chained[1]:
            return None
        return chained[3]

    def _deleted(self, key: str) -> bool:
        """Whether the commit object at `key` is the fence a delete left (one GET)."""
        held = self.objects.get(key)
        if held is None:
            return False
        try:
            record = decode_line(held[0]).record
        except CorruptLine:
            return False
        return bool((record.get("fence") or {}).get("deleted"))

    def load(self, session_id: str, *, upto_seq: int | None = None) -> SessionState:
        """The state without a lease (with `upto_seq`, as it was after that record); a strict store also validates
        its stored histories (as `open` does)."""
        self._check_id(session_id)
        state = self.read(session_id, upto_seq=upto_seq).state
        if self.strict:
            verify_histories(self._where(self.keys.session(session_id)), state)  # type: ignore[arg-type]
        return state

    def spec_snapshot(self, session_id: str) -> bytes:
        held = self.objects.get(self.keys.spec_snapshot(session_id))
        if held is None:
            raise CorruptSession(self._where(self.keys.spec_snapshot(session_id)), "missing")
        return held[0]

    def inspect(self, session_id: str) -> Inspection:
        """What `sessions check` reports: the commit record as read, and the spec snapshot a resume runs when the
        spec file is gone (present, and the bytes the session was created from)."""
        inspection = super().inspect(session_id)
        key = self.keys.spec_snapshot(session_id)
        try:
            data: bytes | None = self.spec_snapshot(session_id)
        except CorruptSession:
            data = None
        if data is None:
            inspection.findings.append(Finding("error", self._where(key), SNAPSHOT_MISSING))
        elif inspection.state is not None and not spec_snapshot_matches(data, inspection.state.meta):
            inspection.findings.append(Finding("error", self._where(key), SNAPSHOT_DIFFERS))
        return inspection

    def resolve(self, id_or_prefix: str) -> str:
        """An exact id costs one GET (the session's view, which every listed session has); a prefix is matched
        against the listed views."""
        text = id_or_prefix.strip()
        if is_session_id(text) and (is_uuid(text) or not could_be_prefix(text)):
            held = self.objects.get(self.keys.view(text))
            if held is None:
                raise SessionNotFound(text)
            self._views_read[text] = held[0]
            return text
        return super().resolve(id_or_prefix)

    @staticmethod
    def _check_id(session_id: str) -> None:
        if not is_session_id(session_id):
            raise UsageError(f"Not a session id: {session_id!r}")

    # -- creating and opening -------------------------------------------------------------------------
    def _lease(self, session_id: str, unit: str | None = None, attempt: int | None = None) -> S3Lease:
        """The session's lease, or with `unit` the lease of one unit of its run held by `attempt`."""
        return S3Lease(
            self.objects,
            self.keys.lease(session_id) if unit is None else self.keys.unit_lease(session_id, unit),
            session_id,
            ttl_s=self.lease_ttl_s,
            skew_s=self.lease_skew_s,
            clock=self.clock,
            attempt=attempt,
            what=None if unit is None else f"unit {unit} of session {session_id}",
        )

    def _live(self, record: LeaseRecord) -> bool:
        return self.clock() <= record.expires_at + self.lease_skew_s

    def _unit_leases(self, session_id: str) -> list[tuple[str, str, LeaseRecord]]:
        """The unit leases of the session's run (one LIST and a GET of each), as (key, ETag, record)."""
        found = []
        for listed in self.objects.list(self.keys.unit_leases(session_id)):
            held = self.objects.get(listed.key)
            if held is not None:  # else released meanwhile
                found.append((listed.key, held[1], LeaseRecord.decode(held[0], self._where(listed.key))))
        return found

    def _unit_holders(self, session_id: str) -> list[tuple[str, str]]:
        """The unit leases of the session's run, as (key, ETag); SessionInUse naming the holder of a live one.
        Called by a session-wide taker after it holds the session's lease: a unit writer that took its lease
        before is seen here (and fenced), one that comes after sees the session's lease and waits."""
        found = []
        for key, etag, record in self._unit_leases(session_id):
            if self._live(record):
                raise SessionInUse(session_id, record.pid, record.host)
            found.append((key, etag))
        return found

    def unit_holders(self, session_id: str) -> list[LeaseHolder]:
        """The live unit leases' holders, by unit (one LIST, a GET per unit lease)."""
        self._check_id(session_id)
        holders = [
            LeaseHolder(record.pid, record.host, unit=self.keys.unit_of(session_id, key), attempt=record.attempt)
            for key, _etag, record in self._unit_leases(session_id)
            if self._live(record)
        ]
        return sorted(holders, key=lambda holder: holder.unit or "")

    def _drop_unit_leases(self, held: list[tuple[str, str]]) -> None:
        """Delete dead unit leases a fence now covers (If-Match: one renewed meanwhile stays; its writer is fenced
        at its next commit and deletes it itself)."""
        for key, etag in held:
            self.objects.delete(key, if_match=etag)

    def create(
        self,
        meta: dict[str, Any],
        spec_snapshot: bytes,
        *,
        crash_points: CrashPoints | None = None,
        session_id: str | None = None,
    ) -> S3Session:
        chosen = session_id is not None
        meta = new_session_meta(meta, session_id, self.session_ids())  # also checks the bucket (a LIST)
        session_id = meta["session_id"]
        if chosen and self.objects.exists_under(self.keys.commits(session_id)):
            # a deleted session's fences stay (see delete): its id is never used again
            raise UsageError(f"Session id {session_id} belonged to a deleted session; choose another")
        lease = self._lease(session_id)
        lease.acquire()
        try:
            self.objects.put(self.keys.spec_snapshot(session_id), spec_snapshot)
            self.objects.put(self.keys.view(session_id), pending_view_bytes(session_id))
            header = {
                "seq": 0,
                "at": record_time(),
                "kind": HEADER_KIND,
                "schema": SCHEMA_VERSION,
                "events": [event_kinds.session(copy.deepcopy(meta)), event_kinds.status("running")],
                "writer": lease.token,
                "scratch": {"reset": True},  # its scratch files start empty (no earlier layout to look for)
            }
            line = encode_line(header)
            try:
                self.objects.put_immutable(self.keys.commit(session_id, 0), line.data)
            except KeyTaken:
                raise SessionExists(session_id) from None
            stored = StoredSession(line.data, [line], fold([line.record]), {}, -1, "", [], scratch={})
            session = S3Session(self, stored, lease, crash_points)
            session.write_view()
            return session
        except BaseException:
            lease.release()
            raise

    def open(self, session_id: str, *, crash_points: CrashPoints | None = None, check: bool = True) -> S3Session:
        """Take the lease (one PUT when it is free), list the unit leases, read the session (its LIST, the checkpoint
        and the commits after it that this process has not seen), fence when a holder was replaced, restore the
        scratch files, write the view. A session that does not exist is found by the read (the lease is then
        released): no request is spent on asking first."""
        self._check_id(session_id)
        lease = self._lease(session_id)
        replaced = lease.acquire()
        try:
            dead_units = self._unit_holders(session_id)
            stored = self.read(session_id)
            if check:
                verify_histories(self._where(self.keys.session(session_id)), stored.state)  # type: ignore[arg-type]
            session = S3Session(self, stored, lease, crash_points)
            fenced = replaced is not None or bool(dead_units)
            if fenced:
                session.write_fence(replaced)  # fences the previous holder and every unit writer
                self._drop_unit_leases(dead_units)
            # after the fence: a fenced writer's files can no longer be named; without one, the read's listing
            # (taken under our lease) shows every key a writer left
            listing = None if fenced or stored.listing is None else [item.key for item in stored.listing]
            session.scratch.restore(listing=listing)
            if stored.leftovers:
                self.objects.delete_many(stored.leftovers)
            # the view is written unless `resolve` just read these very bytes (a resume of a session whose last
            # writer wrote its view): a PUT of what the bucket holds changes nothing a reader sees
            if fenced or self._views_read.pop(session_id, None) != view_bytes(session.state):
                session.write_view()
            return session
        except BaseException:
            lease.release()
            raise

    def open_unit(
        self,
        session_id: str,
        *,
        unit: str,
        attempt: int,
        crash_points: CrashPoints | None = None,
        check: bool = True,
    ) -> S3Session:
        """Open a session to run one unit of it while sibling units run elsewhere: the unit's lease, not the
        session's. `attempt` (the engine's attempt number, from 1) orders the unit's holders: a later attempt
        takes the lease from an earlier one at once and fences it with a unit fence record; an earlier attempt
        finding a later one is SessionFenced. SessionInUse while a session-wide holder is live (a plan pass, a
        local resume, a `sessions` command). The session's scratch files are restored without removing local
        ones (a sibling on this machine may be writing its own)."""
        self._check_id(session_id)
        self.read_existing_or_raise(session_id)
        lease = self._lease(session_id, unit, attempt)
        replaced = lease.acquire()
        try:
            # after our lease is visible: a session-wide taker either is seen here or sees us (`_unit_holders`)
            session_lease = self._lease(session_id).current()
            if session_lease is not None and self._live(session_lease[0]):
                raise SessionInUse(session_id, session_lease[0].pid, session_lease[0].host)
            stored = self.read(session_id)
            if check:
                verify_histories(self._where(self.keys.session(session_id)), stored.state)  # type: ignore[arg-type]
            session = S3Session(self, stored, lease, crash_points, unit=unit)
            session.scratch.restore(remove_unknown=False)
            if replaced is not None:
                session.write_fence(replaced)  # before any use of the state: the earlier attempt is fenced out
            return session
        except BaseException:
            lease.release()
            raise

    def read_existing_or_raise(self, session_id: str) -> None:
        """SessionNotFound unless the session has a commit or a checkpoint (one LIST request)."""
        # "commits/" and "checkpoints/" both begin with "c": one request finds either
        if not self.objects.exists_under(self.keys.session(session_id) + "c"):
            raise SessionNotFound(session_id)

    # -- listing and housekeeping ---------------------------------------------------------------------
    def session_ids(self) -> list[str]:
        """The sessions with a view object (`create` writes a pending one before the header commit, so a crash
        between the two still lists the session: `list` reads the commits of a pending view)."""
        views = self.keys.views()
        keys = [listed.key[len(views) :] for listed in self.objects.list(views)]
        ids = [key[: -len(".json")] for key in keys if key.endswith(".json")]
        return [sid for sid in ids if is_session_id(sid)]

    def _lease_times(self) -> dict[str, float]:
        """When each session's lease, or the latest of its units' leases, was last renewed."""
        times: dict[str, float] = {}
        for listed in self.objects.list(self.keys.leases()):
            session_id = self.keys.leased_session(listed.key.rsplit("/", 1)[-1])
            times[session_id] = max(times.get(session_id, 0.0), listed.last_modified)
        return times

    def list(self) -> list[SessionSummary]:
        lease_times = self._lease_times()
        now = self.clock()
        summaries = []
        ids = self.session_ids()
        held_views = self.objects.get_many([self.keys.view(session_id) for session_id in ids])
        for session_id, held in zip(ids, held_views, strict=True):
            view = self._view(session_id, held)
            if view is None:
                continue
            status = view.get("status", "running")
            renewed = lease_times.get(session_id)
            until = None if renewed is None else renewed + self.lease_ttl_s + self.lease_skew_s
            live = until is not None and now <= until
            summaries.append(
                SessionSummary(
                    session_id=session_id,
                    workflow_name=str(view.get("workflow_name")),
                    pattern=str(view.get("pattern")),
                    status=status,
                    stale=status == "running" and not live,
                    reason=view.get("status_reason"),
                    created_at=view.get("created_at"),
                    updated_at=view.get("updated_at"),
                    spec_path=view.get("spec_path"),
                    lease_until=until if status == "running" and live else None,
                )
            )
        summaries.sort(key=lambda s: s.updated_at or "", reverse=True)
        return summaries

    def _view(self, session_id: str, held: tuple[bytes, str] | None) -> dict[str, Any] | None:
        """The session's view (`held`: its object); read from its commits when missing or unreadable (a crash
        during create)."""
        if held is not None:
            try:
                view = json.loads(held[0])
                if isinstance(view, dict) and view.get("session_id") == session_id and not view.get("pending"):
                    return view
            except ValueError:
                pass
        try:
            return json.loads(view_bytes(self.read(session_id).state))
        except (SessionNotFound, CorruptSession):
            return None

    def holder(self, session_id: str) -> LeaseHolder | None:
        self._check_id(session_id)
        self.read_existing_or_raise(session_id)
        lease = self._lease(session_id).current()
        if lease is None or self.clock() > lease[0].expires_at + self.lease_skew_s:
            return None
        return LeaseHolder(lease[0].pid, lease[0].host)

    def delete(self, session_id: str) -> None:
        """Every object of the session but its fence records, under its lease. A delete first writes a fence
        marked `deleted` at the next commit number; the fences stay (a few hundred bytes each) because a writer
        paused before its PUT aims at a fence's key: with them its PUT is refused and it stops (removing the
        scratch files it saved), without them it would recreate the session's keys. Deleting a deleted session
        removes what such a writer could still leave (a view or checkpoint written in the same pause), else it is
        SessionNotFound."""
        self._check_id(session_id)
        self.read_existing_or_raise(session_id)
        lease = self._lease(session_id)
        replaced = lease.acquire(renew_in_background=False)
        try:
            dead_units = self._unit_holders(session_id)  # the delete's fence covers their writers
            try:
                stored = self.read(session_id)
            except SessionNotFound:
                if not self._remove_strays(session_id):
                    raise
                return
            keep = {self.keys.commit(session_id, seq) for seq in stored.fences}
            keep.add(self._write_tombstone(session_id, stored, lease, replaced))
            self.objects.delete(self.keys.view(session_id))
            # a crash midway leaves keys under the session's prefix: it is still found and can be deleted again
            listed = self.objects.list(self.keys.session(session_id))
            self.objects.delete_many([item.key for item in listed if item.key not in keep])
            self._drop_unit_leases(dead_units)
        finally:
            lease.release()

    def _write_tombstone(self, session_id: str, stored: StoredSession, lease: S3Lease, replaced: str | None) -> str:
        """PUT the delete's fence at the next commit number (after any record that lands first); its key."""
        while True:
            seq = stored.state.seq + 1
            record = {"seq": seq, "at": record_time(), "events": [], "writer": lease.token}
            key = self.keys.commit(session_id, seq)
            try:
                self.objects.put_new(key, encode_line({**record, "fence": fence(lease, replaced, deleted=True)}).data)
                return key
            except KeyTaken:
                stored = self.read(session_id)

    def _remove_strays(self, session_id: str) -> bool:
        """Objects of a deleted session other than its commit keys (all fences); whether there were any."""
        commits = self.keys.commits(session_id)
        strays = [item.key for item in self.objects.list(self.keys.session(session_id))]
        strays = [key for key in strays if not key.startswith(commits)]
        view = self.objects.exists(self.keys.view(session_id))
        if view:
            strays.append(self.keys.view(session_id))
        self.objects.delete_many(strays)
        return bool(strays)

    def workspace(self, session_id: str) -> Workspace:
        """The session's scratch directory on this machine; its files are saved with the session's commits."""
        return Workspace(scratch_dir=self.scratch_dir(session_id), fileops=FileOps())

    def scratch_dir(self, session_id: str) -> Path:
        self._check_id(session_id)
        return self.scratch_root / session_id / "scratch"
