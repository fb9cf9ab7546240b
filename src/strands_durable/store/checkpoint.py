"""Checkpoints (compaction) of a session journal: its header, one record holding the whole state, then the records
committed after it.

A compacted journal is a journal like any other: `journal.read_journal` reads it and the fold restores the state
from the checkpoint record (`state.restore`), so opening a long session reads its live state and the records since
the last checkpoint, not its whole history. The local store writes one in place of its journal atomically (temp
file, fsync, rename, directory fsync): a crash before the rename leaves the old journal, after it the new one,
and both fold to the same state.
"""

from __future__ import annotations

from typing import Any

from strands_durable.store.journal import encode_line
from strands_durable.store.state import SessionState, snapshot

__all__ = ["CHECKPOINT_MIN_BYTES", "checkpoint_due", "checkpoint_record", "compacted_journal"]

CHECKPOINT_MIN_BYTES = 1 << 20  # history (journal bytes after the last checkpoint) below this is never compacted


def checkpoint_record(state: SessionState) -> dict[str, Any]:
    """The record that stands for every record up to `state.seq`."""
    return {"seq": state.seq, "at": state.updated_at, "checkpoint": snapshot(state)}


def compacted_journal(header: bytes, state: SessionState) -> bytes:
    """A journal's bytes equivalent to the one `state` was folded from: `header` (its first line, as written)
    and one checkpoint record; records after `state.seq` follow it as in any journal. The state's dicts keep
    their order (units and conversations in commit order, as the fold of the whole journal has them)."""
    return header + encode_line(checkpoint_record(state), sort_keys=False).data


def checkpoint_due(size: int, checkpoint_end: int, minimum: int, *, closing: bool = False) -> bool:
    """Whether a journal of `size` bytes, whose checkpoint (or header) ends at byte `checkpoint_end`, is to be
    compacted now.

    While a session runs: once the records after the checkpoint fill as many bytes as it (and at least
    `minimum`), so writing a checkpoint costs no more than the history it replaces and the journal stays within
    about twice the live state (plus `minimum`). At close: once they fill `minimum`, so the next open of a long
    session reads its state and little history.
    """
    history = size - checkpoint_end
    return history >= minimum and (closing or history >= checkpoint_end)
