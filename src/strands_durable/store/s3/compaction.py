"""Compaction of a session on S3: checkpoint objects that hold the session's folded state, written by its lease
holder every `checkpoint_every` commits, and read back by every reader.

A checkpoint `checkpoints/<seq>` is a compacted journal (store/checkpoint.py): the session's header record and one
record holding the whole state after record `seq`, so its size follows the live state, not the history. The
checkpoint record also carries what the S3 protocol needs besides the state: the fence records it covers (a writer
fenced out after a compaction still finds the fence that refuses it) and the scratch files' manifest
(store/s3/scratch.py). Sessions compacted by earlier releases (checkpoints holding records 0..seq concatenated)
are still read; their next compaction writes the new form.

Guarantees (docs/storage.md, "Sessions on S3"): commit objects are deleted only after the checkpoint covering them
exists, fence objects never; a reader needs one LIST, the latest checkpoint and at most `checkpoint_every` commits.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from strands_durable.errors import CorruptSession, SessionFenced
from strands_durable.store.checkpoint import checkpoint_record
from strands_durable.store.journal import Line, encode_line, read_journal
from strands_durable.store.s3.client import KeyTaken
from strands_durable.store.s3.stored import SessionReader, StoredSession
from strands_durable.store.state import SessionState

Manifest = dict[str, str]  # a scratch file's name -> its object's key under the session's prefix


@dataclass
class CheckpointContents:
    """What a checkpoint object gives a reader."""

    header: bytes  # the session's header record, as written (the first line)
    records: list[dict[str, Any]]  # to fold: [header, checkpoint record], or (older form) records 0..seq
    fences: dict[int, dict[str, Any]]  # seq -> the `fence` field of each fence record it covers
    scratch: Manifest | None  # the scratch files' manifest at its seq (None: never recorded)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_checkpoint(where: str, data: bytes, seq: int) -> CheckpointContents:
    """Parse the checkpoint object at `where` (key seq `seq`), either form; CorruptSession naming it otherwise."""
    contents = read_journal(where, data)
    records = contents.records
    if contents.torn_tail or not records:
        raise CorruptSession(where, "not a whole checkpoint")
    header = data[: data.index(b"\n") + 1]
    if contents.checkpoint_end:
        if len(records) != 2 or records[1]["seq"] != seq:
            raise CorruptSession(where, f"holds {len(records)} records up to {records[-1]['seq']}, expected {seq}")
        record = records[1]
        fences = {int(fence_seq): fence for fence_seq, fence in record.get("fences", ())}
        return CheckpointContents(header, records, fences, record.get("scratch"))
    if len(records) != seq + 1:  # the older form: records 0..seq
        raise CorruptSession(where, f"holds {len(records)} whole records, expected {seq + 1}")
    fences = {record["seq"]: record["fence"] for record in records if "fence" in record}
    return CheckpointContents(header, records, fences, None)


def fences_out(record_fence: dict[str, Any], token: str, unit: str | None) -> bool:
    """Whether a fence another writer committed after our last record stops the writer holding lease `token`
    (of `unit`, None for a session-wide writer): a session-wide fence (a takeover, a delete) stops every other
    writer; a unit fence stops only the earlier holders of its unit."""
    if record_fence.get("holder") == token:
        return False
    return "unit" not in record_fence or record_fence["unit"] == unit


def fenced_by(session_id: str, seq: int, fence: dict[str, Any]) -> SessionFenced:
    whose = f" for attempt {fence.get('attempt')} of unit {fence['unit']}" if "unit" in fence else ""
    return SessionFenced(
        session_id,
        f"commit {seq} is a fence written by pid {fence.get('pid')} on host {fence.get('host')}{whose}",
    )


class Compaction:
    """One writer's checkpoints of one session: when one is due, writing it, what it covers; and, for a writer
    that lost a race, which stored records it has not seen yet."""

    def __init__(self, store: SessionReader, session_id: str, stored: StoredSession) -> None:
        self.store = store
        self.session_id = session_id
        self.header = stored.header
        self.checkpoint_seq = stored.checkpoint_seq
        self.checkpoint_digest = stored.checkpoint_digest
        self.head_size = stored.head_size  # bytes of `journal_bytes` before the records after the checkpoint
        self.fences = dict(stored.fences)  # every fence record up to the records this writer has seen

    def due(self, seq: int) -> bool:
        return seq - self.checkpoint_seq >= self.store.checkpoint_every

    def checkpoint_bytes(self, state: SessionState, records: list[Line], scratch: Manifest | None) -> bytes:
        """The checkpoint of `state` (whose records since the last checkpoint are `records`)."""
        fences = self._fences_with(records)
        record: dict[str, Any] = {**checkpoint_record(state), "fences": sorted(fences.items())}
        if scratch is not None:
            record["scratch"] = scratch
        return self.header + encode_line(record, sort_keys=False).data

    def _fences_with(self, records: list[Line]) -> dict[int, dict[str, Any]]:
        fences = dict(self.fences)
        for line in records:
            if "fence" in line.record:
                fences[line.seq] = line.record["fence"]
        return fences

    def write(self, state: SessionState, records: list[Line], scratch: Manifest | None) -> list[Line]:
        """Checkpoint `state`, then delete the commit objects it covers (fences excepted) and the previous
        checkpoint. `records`: this writer's records since its last checkpoint; returns those still after the
        checkpoint (none once it is written; all of them when another writer's object holds its key)."""
        objects, keys, sid = self.store.objects, self.store.keys, self.session_id
        upto = state.seq
        if self.store.strict:
            self.verify(records)  # the commits about to be deleted hold exactly what this writer committed
        data = self.checkpoint_bytes(state, records, scratch)
        try:
            objects.put_immutable(keys.checkpoint(sid, upto), data)
        except KeyTaken:
            held = objects.get(keys.checkpoint(sid, upto))
            if held is None or held[0] != data:
                return records  # not ours: leave compaction to a later commit
        fences = self._fences_with(records)
        doomed = [keys.commit(sid, seq) for seq in range(self.checkpoint_seq + 1, upto + 1) if seq not in fences]
        if self.store.keep_history:  # the commits stay: `journal_bytes` still begins with the header
            doomed, self.head_size = [], self.head_size + sum(len(line.data) for line in records)
        else:
            self.head_size = len(data)
        if self.checkpoint_seq >= 0:
            doomed.append(keys.checkpoint(sid, self.checkpoint_seq))
        self.checkpoint_seq, self.checkpoint_digest, self.fences = upto, digest(data), fences
        objects.delete_many(doomed)  # only now: the checkpoint covering them exists
        if self.store.strict:
            self.verify([])
        return []

    def read_own_checkpoint(self) -> list[dict[str, Any]] | None:
        """The records to fold for this writer's latest checkpoint (one GET; none without one), or None when
        that checkpoint object is gone."""
        if self.checkpoint_seq < 0:
            return []
        key = self.store.keys.checkpoint(self.session_id, self.checkpoint_seq)
        held = self.store.objects.get(key)
        if held is None:
            return None
        return read_checkpoint(f"s3://{self.store.bucket}/{key}", held[0], self.checkpoint_seq).records

    def verify(self, records: list[Line]) -> None:
        """A strict store's check (at each compaction and at close): read the session back as a new reader would
        (checksums, seqs against keys, no gap) and require exactly what this writer knows: its latest checkpoint,
        byte for byte, and `records` after it. AssertionError naming the first difference."""
        stored = self.store.read(self.session_id, fresh=True)  # what the bucket holds, not what we remember
        sid = self.session_id
        if (stored.checkpoint_seq, stored.checkpoint_digest) != (self.checkpoint_seq, self.checkpoint_digest):
            raise AssertionError(
                f"strict store: session {sid} holds checkpoint {stored.checkpoint_seq}, not the writer's "
                f"checkpoint {self.checkpoint_seq} (sha256 {self.checkpoint_digest[:12] or 'none'})"
            )
        for offset, (held, mine) in enumerate(zip(stored.records, records, strict=False)):
            if held != mine:
                seq = self.checkpoint_seq + 1 + offset
                raise AssertionError(f"strict store: session {sid} holds another record at seq {seq}")
        if len(stored.records) < len(records):
            lost = self.checkpoint_seq + 1 + len(stored.records)
            raise AssertionError(f"strict store: session {sid} lost its records from seq {lost}")

    def unseen(self, stored: StoredSession, known: list[Line], token: str, unit: str | None) -> list[Line]:
        """The records `stored` holds after the `known` ones (this writer's records since its checkpoint), for a
        writer whose conditional PUT lost. SessionFenced when its records were replaced, when a fence of another
        lease covered by a newer checkpoint follows them, or when another writer compacted records it never saw."""
        offset = stored.checkpoint_seq - self.checkpoint_seq
        if 0 <= offset <= len(known):
            if stored.records[: len(known) - offset] != known[offset:]:
                raise SessionFenced(self.session_id, "its commits were replaced by another writer")
            return stored.records[len(known) - offset :]
        if offset < 0:
            raise SessionFenced(self.session_id, f"its checkpoint {self.checkpoint_seq} was replaced by another writer")
        last_known = self.checkpoint_seq + len(known)
        for seq, fence in sorted(stored.fences.items()):
            if seq > last_known and fences_out(fence, token, unit):
                raise fenced_by(self.session_id, seq, fence)
        raise SessionFenced(
            self.session_id, f"records {last_known + 1}..{stored.checkpoint_seq} were compacted before it read them"
        )
