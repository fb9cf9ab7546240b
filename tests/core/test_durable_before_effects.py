"""Deferred commits end to end, with a real `strands.Agent`: a tool never runs before the model answer that asked
for it is durable, and the model is never called before the previous tool results are durable. Observed through
the FileOps seam (the recording of every real file operation, which says which appends each fdatasync covered)
with the run's `tool.before` and `model.before` points marked in the same log."""

from __future__ import annotations

import json
from pathlib import Path

from strands_durable.crashpoints import CrashPoint, CrashPoints
from strands_durable.faults.recording import Op, RecordingFileOps
from strands_durable.runner.options import RunOptions
from strands_durable.runner.run import run_workflow
from strands_durable.store import LocalStore
from strands_durable.store.journal import JOURNAL_NAME
from strands_durable.testing.chain import chain_spec_text
from tests.slow_disk import SlowSyncOps

STEPS = 3


def _spec(directory: Path) -> Path:
    path = directory / "chain.strands.yaml"
    path.write_text(chain_spec_text(STEPS, name="deferred-chain"))
    return path


def _script() -> dict:
    """Per step: one answer asking for two calculator calls (run one after the other), then a text answer."""
    calls = [
        {"name": "calculator", "input": {"expression": "1 + 1"}},
        {"name": "calculator", "input": {"expression": "2 * 3"}},
    ]
    return {f"worker{i}": [{"tool_calls": calls}, f"Step {i} done."] for i in range(STEPS)}


def _kind(op: Op) -> str:
    """What a journal append holds: `answer`, `result` (a tool result record) or `other`."""
    events = json.loads(op.data[9:])["events"]
    for event in events:
        if event.get("type") == "tool_result":
            return "result"
        if event.get("type") == "message" and event["message"]["role"] == "assistant":
            return "answer"
    return "other"


def _durable_at(log: list[Op], append_index: int, point_index: int) -> bool:
    """Whether the append at `append_index` was covered by an fdatasync that completed before `point_index`
    (an fdatasync is logged when it returned; `info` is the log length when it started)."""
    for op in log[append_index + 1 : point_index]:
        if op.kind == "fdatasync" and op.path is not None and op.path.name == JOURNAL_NAME and op.info > append_index:
            return True
        if op.kind == "sync_all":
            return True
    return False


class SlowRecording(RecordingFileOps):
    def __init__(self) -> None:
        super().__init__()
        self._ops = SlowSyncOps()  # the real operations below the recording, with a slow fdatasync


def _record(tmp_path: Path) -> list[Op]:
    ops = SlowRecording()
    bus = CrashPoints()

    def mark(point: CrashPoint) -> None:
        if point.site in ("tool.before", "model.before"):
            ops.mark(("point", point.site, point.path))

    bus.subscribe(mark)
    options = RunOptions(provider="scripted", scripts=_script(), out_dir=tmp_path / "out", crash_points=bus)
    outcome = run_workflow(_spec(tmp_path), options, store=LocalStore(tmp_path / "sessions", fileops=ops))
    assert outcome.status == "completed"
    return list(ops.log)


def test_tools_and_model_calls_wait_for_what_they_depend_on_and_results_share_fdatasyncs(tmp_path: Path) -> None:
    log = _record(tmp_path)
    appends = [
        (i, _kind(op)) for i, op in enumerate(log) if op.kind == "append" and op.path and op.path.name == JOURNAL_NAME
    ]
    points = [(i, op.info[1], op.info[2]) for i, op in enumerate(log) if op.kind == "mark" and op.info[0] == "point"]
    assert sum(1 for _, site, _ in points if site == "tool.before") == 2 * STEPS
    assert sum(1 for _, site, _ in points if site == "model.before") == 2 * STEPS
    for index, site, path in points:
        before = [(i, kind) for i, kind in appends if i < index]
        if site == "tool.before":
            answer = max(i for i, kind in before if kind == "answer")
            assert _durable_at(log, answer, index), f"{path}: the tool ran before the answer asking for it was durable"
        else:
            for i, kind in before:
                if kind in ("answer", "result"):
                    assert _durable_at(log, i, index), f"{path}: the model was called before append {i} was durable"
    # the deferral is real: some tool result was not yet durable when the next tool of its turn started
    tool_points = [index for index, site, _ in points if site == "tool.before"]
    assert any(
        not _durable_at(log, i, index) for i, kind in appends if kind == "result" for index in tool_points if index > i
    )
