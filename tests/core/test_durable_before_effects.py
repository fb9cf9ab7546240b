"""Deferred commits end to end, with a real `strands.Agent`: a commit is durable before anything outside the
process acts on it or could show it, and no earlier. A tool never runs before the model answer that asked for it
(and so, the journal being ordered, everything before it) is durable; an artifact claim, a status change the user
sees (completed, paused for a human) is made only once every commit before it is durable. A model request and a
unit outcome are not barriers: the results a request carries may still be in the syncer's fdatasync. Observed
through the FileOps seam (the recording of every real file operation, which says which appends each fdatasync
covered) with the run's crash points and commits marked in the same log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from strands_durable import CrashPoints, LocalStore, RunOptions, run_workflow
from strands_durable.crashpoints import Commit, CrashPoint
from strands_durable.errors import HitlPaused
from strands_durable.faults.classes.recording import Op, RecordingFileOps
from strands_durable.runner.reporter import Reporter
from strands_durable.store.journal import JOURNAL_NAME, decode_line
from strands_durable.testing.chain import chain_spec_text
from tests.slow_disk import SlowSyncOps

STEPS = 3
ARTIFACT = "report.md"


def _script() -> dict:
    """Per step: one answer asking for two calculator calls (run one after the other), then a text answer."""
    calls = [
        {"name": "calculator", "input": {"expression": "1 + 1"}},
        {"name": "calculator", "input": {"expression": "2 * 3"}},
    ]
    return {f"worker{i}": [{"tool_calls": calls}, f"Step {i} done."] for i in range(STEPS)}


def _kind(op: Op) -> str:
    """What a journal append holds: `answer`, `result` (a tool result record), `unit` (an outcome) or `other`."""
    events = decode_line(op.data).record["events"]
    for event in events:
        if event.get("type") == "tool_result":
            return "result"
        if event.get("type") == "unit":
            return "unit"
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


def _appends(log: list[Op]) -> list[tuple[int, str]]:
    return [
        (i, _kind(op)) for i, op in enumerate(log) if op.kind == "append" and op.path and op.path.name == JOURNAL_NAME
    ]


def _points(log: list[Op]) -> list[tuple[int, str, str]]:
    return [(i, op.info[1], op.info[2]) for i, op in enumerate(log) if op.kind == "mark" and op.info[0] == "point"]


def _not_durable_before(log: list[Op], index: int, upto: int | None = None) -> list[int]:
    """The journal appends made before `index` (or up to the append at `upto`) that no fdatasync had made durable
    by then."""
    last = index - 1 if upto is None else upto
    return [i for i, _ in _appends(log) if i <= last and not _durable_at(log, i, index)]


class SlowRecording(RecordingFileOps):
    def __init__(self) -> None:
        super().__init__()
        self._ops = SlowSyncOps()  # the real operations below the recording, with a slow fdatasync


class MarkingReporter(Reporter):
    """Marks in the recording the moment the run tells its caller it finished (what the CLI prints)."""

    def __init__(self, ops: RecordingFileOps) -> None:
        self.ops = ops

    def finished(self, status: str, tokens_before: int, tokens_total: int) -> None:
        self.ops.mark(("point", "finished", status))


_LAST_LOG: list[list[Op]] = []  # the recording of the last `_run`, also when it raised


def _run(tmp_path: Path, spec_text: str, **options: Any) -> list[Op]:
    """Run the spec to completion on the slow recording disk with the crash points, the status and artifact
    commits (once returned) and the reporter's `finished` marked in the log; the log."""
    ops = SlowRecording()
    bus = CrashPoints()

    def mark(point: CrashPoint) -> None:
        if point.site in ("tool.before", "model.before", "unit.after"):
            ops.mark(("point", point.site, point.path))

    def mark_commit(point: Commit) -> None:
        if point.site == "store.after_commit" and {"status", "artifact"} & set(point.kinds):
            ops.mark(("point", "commit:" + "+".join(point.kinds), point.path))

    bus.subscribe(mark)
    bus.subscribe(Commit, mark_commit)
    spec = tmp_path / "chain.strands.yaml"
    spec.write_text(spec_text)
    run_options = RunOptions(
        provider="scripted",
        scripts=_script(),
        out_dir=tmp_path / "out",
        crash_points=bus,
        reporter=MarkingReporter(ops),
        **options,
    )
    _LAST_LOG[:] = [ops.log]
    outcome = run_workflow(spec, run_options, store=LocalStore(tmp_path / "sessions", fileops=ops))
    assert outcome.status == "completed"
    return list(ops.log)


def test_a_tool_runs_only_once_its_answer_and_everything_before_it_is_durable(tmp_path: Path) -> None:
    log = _run(tmp_path, chain_spec_text(STEPS, name="deferred-chain"))
    points = _points(log)
    assert sum(1 for _, site, _ in points if site == "tool.before") == 2 * STEPS
    assert sum(1 for _, site, _ in points if site == "model.before") == 2 * STEPS
    for index, site, path in points:
        if site == "tool.before":  # earlier results of the same turn need not be (re-run, as any uncommitted call)
            answer = max(i for i, kind in _appends(log) if kind == "answer" and i < index)
            late = _not_durable_before(log, index, upto=answer)
            assert not late, f"{path}: the tool ran before journal appends {late} (its answer {answer}, or earlier)"
    # the deferral is real: a tool result was not durable yet when the next tool of its turn started, and the
    # model was asked with tool results still in the syncer's fdatasync (a model request is not a barrier)
    tool_points = [index for index, site, _ in points if site == "tool.before"]
    model_points = [index for index, site, _ in points if site == "model.before"]
    results = [i for i, kind in _appends(log) if kind == "result"]
    assert any(not _durable_at(log, i, index) for i in results for index in tool_points if index > i)
    assert any(not _durable_at(log, i, index) for i in results for index in model_points if index > i)


def test_artifacts_and_the_completed_status_wait_for_every_commit_before_them_and_unit_outcomes_do_not(
    tmp_path: Path,
) -> None:
    spec = chain_spec_text(STEPS, name="deferred-chain") + (
        f"outputs:\n  artifacts:\n    - {{path: {ARTIFACT}, from: '{{{{ last_response }}}}'}}\n"
    )
    log = _run(tmp_path, spec)
    points = _points(log)
    artifact_write = next(i for i, op in enumerate(log) if op.path is not None and ARTIFACT in op.path.name)
    assert not _not_durable_before(log, artifact_write), "the artifact was written before every commit was durable"
    effects = [(i, site) for i, site, _ in points if site.startswith("commit:") or site == "finished"]
    assert {site for _, site in effects} >= {"commit:artifact", "commit:status", "finished"}
    for index, site in effects:
        late = _not_durable_before(log, index)
        assert not late, f"{site}: returned before journal appends {late} were durable"
    # a unit outcome is deferred (re-derived from its durable conversation): some was not durable at `unit.after`
    units = [i for i, kind in _appends(log) if kind == "unit"]
    unit_points = [index for index, site, _ in points if site == "unit.after"]
    assert len(unit_points) == STEPS
    assert any(not _durable_at(log, i, index) for i in units for index in unit_points if index > i)


def test_a_hitl_pause_is_committed_only_once_every_commit_before_it_is_durable(tmp_path: Path) -> None:
    spec = chain_spec_text(STEPS, name="deferred-chain") + "      - {type: hitl, prompt: 'Approve the steps?'}\n"
    with pytest.raises(HitlPaused):
        _run(tmp_path, spec)
    log = _LAST_LOG[0]
    pauses = [index for index, site, _ in _points(log) if site == "commit:pattern_state+status"]
    assert len(pauses) == 1, _points(log)
    assert not _not_durable_before(log, pauses[0]), "the HITL pause was committed before the commits before it"
