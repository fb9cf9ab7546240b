"""The fault kit's seed (`LocalStore.seed`, one per crash point the chaos explorer explores) writes a scratch session
in the fewest file operations: its two files written in place, the journal last, nothing renamed or fsynced; a new
process opens it at the state of the records it was given."""

from __future__ import annotations

from pathlib import Path

from strands_durable import LocalStore
from strands_durable.faults.classes.recording import BARRIERS, RecordingFileOps
from strands_durable.store import events
from strands_durable.store.base import read_journal_bytes
from strands_durable.store.ids import new_session_id
from strands_durable.store.local import JOURNAL_NAME


def test_a_seed_writes_its_two_files_in_place_the_journal_last_and_opens_at_their_state(tmp_path: Path) -> None:
    source = LocalStore(tmp_path / "source")
    session = source.create({"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}, b"name: w\n")
    session.commit([events.status("paused")])
    session.commit([events.status("running")])
    session_id = session.state.session_id
    session.abandon()
    lines = source.journal_bytes(session_id).splitlines(keepends=True)
    header = read_journal_bytes(lines[0]).records[0]

    ops = RecordingFileOps()
    seeded = LocalStore(tmp_path / "seeded", fileops=ops)
    journal = seeded.seed(session_id, header=header, tail=b"".join(lines[1:2]), spec_snapshot=b"name: w\n")

    assert journal == b"".join(lines[:2])
    writes = [(op.kind, op.path.name) for op in ops.log if op.kind not in ("mkdir", "create")]
    assert writes == [("write", "spec_snapshot.yaml"), ("write", JOURNAL_NAME)]
    assert not [op for op in ops.log if op.kind in BARRIERS or op.kind == "rename"]
    state = LocalStore(tmp_path / "seeded").load(session_id)
    assert (state.seq, state.status) == (1, "paused")
