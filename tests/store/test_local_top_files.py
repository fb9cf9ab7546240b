"""session.json and pattern_state.json are replaced only when their bytes change: replacing an existing file makes
ext4 flush the new data at once (~0.6 ms each), and close used to repeat the flush the status change had just made.
A repair still writes them all again, and the files stay true to the journal."""

from __future__ import annotations

from pathlib import Path

from strands_durable import LocalStore
from strands_durable.faults.classes.recording import RecordingFileOps
from strands_durable.store.layout import new_session_id
from strands_durable.store.verify import readable_file_findings


def _top_file_writes(ops: RecordingFileOps, since: int) -> list[str]:
    """The session.json / pattern_state.json replaced since log entry `since` (their temp files' renames)."""
    return sorted(
        op.dst.name
        for op in ops.log[since:]
        if op.kind == "rename" and op.dst is not None and op.dst.name in ("session.json", "pattern_state.json")
    )


def test_close_after_a_status_change_replaces_neither_file_and_a_change_or_a_repair_does(tmp_path: Path) -> None:
    ops = RecordingFileOps()
    store = LocalStore(tmp_path, fileops=ops)
    session = store.create({"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}, b"")
    directory = store.directory_of(session.session_id)
    mark = len(ops.log)
    session.commit([{"type": "status", "status": "completed"}], path="complete")
    assert _top_file_writes(ops, mark) == ["session.json"]  # the status changed it; pattern_state.json did not change
    mark = len(ops.log)
    session.flush_views()
    assert _top_file_writes(ops, mark) == []
    session.rewrite_views()  # a repair writes every readable file again
    assert _top_file_writes(ops, mark) == ["pattern_state.json", "session.json"]
    mark = len(ops.log)
    session.close()
    assert _top_file_writes(ops, mark) == []
    # the files agree with the journal as `strands sessions check` reads them (the sync mark, after the flush,
    # is the only record they do not show)
    state = store.load(session.session_id)
    findings = readable_file_findings(directory, state, trusted=state.trusted_seq(ops.boot_id()))
    assert [f for f in findings if f.severity == "error"] == []
