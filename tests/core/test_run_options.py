"""The runner never changes the caller's RunOptions: they are frozen, and the one value a run consumes (the answer
to a pending human-in-the-loop question) is taken from the run's own context."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from strands_durable import LocalStore, resume, run_workflow
from strands_durable.errors import HitlPaused
from strands_durable.faults.kit.oracle import RequestLog
from tests.conftest import EXAMPLES
from tests.core.support import ExecutionLog, counted_options


def test_a_resume_that_consumes_the_answer_leaves_the_callers_options_as_they_were(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "sessions")
    log = ExecutionLog(tmp_path / "exec.log")
    with pytest.raises(HitlPaused):
        run_workflow(
            EXAMPLES / "parallel-market-scan.strands.yaml",
            counted_options(log, RequestLog(), out_dir=tmp_path / "out"),
            store=store,
        )
    (session_id,) = store.session_ids()
    options = counted_options(log, RequestLog(), hitl_response="looks right")
    before = dataclasses.replace(options)
    assert resume(session_id, options, store=store).status == "completed"
    assert options == before and options.hitl_response == "looks right"
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.hitl_response = None  # type: ignore[misc]


def test_hitl_answer_answers_every_pause_of_a_run(tmp_path: Path) -> None:
    spec = Path(__file__).parents[1] / "patterns" / "specs" / "workflow-two-questions.strands.yaml"
    store = LocalStore(tmp_path / "sessions")
    options = counted_options(ExecutionLog(tmp_path / "exec.log"), RequestLog(), out_dir=tmp_path / "out")
    outcome = run_workflow(spec, dataclasses.replace(options, hitl_answer="tomorrow"), store=store)
    assert outcome.status == "completed"
    units = store.load(outcome.session_id).units
    assert units["task:budget"]["response"] == units["task:deadline"]["response"] == "tomorrow"
