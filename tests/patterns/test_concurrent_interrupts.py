"""Concurrent units and interruptions: a crash in one branch stops the others at their next safe point and is
raised as it was once every thread has stopped; Ctrl+C (a stop request) pauses the session, and both resume to
the uninterrupted run. A run's wall-time budget stops it with exit 20."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from types import FrameType

import pytest

from strands_durable import CrashPoints, InjectedCrash, LocalStore, resume, run_workflow
from strands_durable.agent.durable import StopRequested
from strands_durable.crashpoints import CrashPoint
from strands_durable.errors import BudgetExceeded
from strands_durable.faults.kit.oracle import comparable, first_difference
from tests.conftest import EXAMPLES
from tests.core.support import ExecutionLog, crash_at
from tests.patterns.support import Probe, spec_variant

PARALLEL = EXAMPLES / "parallel-market-scan.strands.yaml"


def unit_threads() -> list[threading.Thread]:
    """Unit threads still running a unit (the pool keeps its idle threads, waiting for the next run's units)."""
    frames = sys._current_frames()
    units = [t for t in threading.enumerate() if t.name.startswith("strands-unit")]
    return [t for t in units if _running_work(frames.get(t.ident))]


def _running_work(frame: FrameType | None) -> bool:
    while frame is not None:
        code = frame.f_code
        if code.co_name == "run" and code.co_filename.endswith(os.path.join("concurrent", "futures", "thread.py")):
            return True  # inside a work item (_WorkItem.run), not waiting for one
        frame = frame.f_back
    return False


def golden(root: Path) -> dict:
    store = LocalStore(root / "golden", strict=True)
    probe = Probe(ExecutionLog(root / "golden.log"))
    outcome = run_workflow(PARALLEL, probe.options(out_dir=root / "gout", hitl_use_defaults=True), store=store)
    return comparable(store.load(outcome.session_id))


def test_a_crash_in_one_branch_is_raised_as_is_after_every_thread_stopped(tmp_path: Path) -> None:
    expected = golden(tmp_path)
    store = LocalStore(tmp_path / "sessions", strict=True)
    log = ExecutionLog(tmp_path / "exec.log")
    target = "branch:trends/step[0]:analyst/turn[0]/model.answered"
    with pytest.raises(InjectedCrash) as crash:
        run_workflow(
            PARALLEL,
            Probe(log).options(out_dir=tmp_path / "out", crash_points=crash_at(target), hitl_use_defaults=True),
            store=store,
        )
    assert crash.value.point.id == target
    assert not unit_threads(), "no unit thread outlives the crashed run"
    (session_id,) = store.session_ids()
    outcome = resume(session_id, Probe(log).options(hitl_use_defaults=True), store=LocalStore(tmp_path / "sessions"))
    assert outcome.status == "completed"
    assert first_difference(expected, comparable(LocalStore(tmp_path / "sessions").load(session_id))) is None


def test_a_stop_request_pauses_concurrent_branches_and_resume_completes_identically(tmp_path: Path) -> None:
    expected = golden(tmp_path)
    stop = threading.Event()
    points = CrashPoints()

    def ask_to_stop(point: CrashPoint) -> None:
        if point.id == "branch:pricing/step[0]:researcher/unit.after":
            stop.set()  # as the CLI's SIGINT handler does

    points.subscribe(ask_to_stop)
    store = LocalStore(tmp_path / "sessions", strict=True)
    log = ExecutionLog(tmp_path / "exec.log")
    options = Probe(log).options(
        out_dir=tmp_path / "out", crash_points=points, stop_requested=stop.is_set, hitl_use_defaults=True
    )
    with pytest.raises(StopRequested):
        run_workflow(PARALLEL, options, store=store)
    assert not unit_threads()
    (session_id,) = store.session_ids()
    state = store.load(session_id)
    assert (state.status, state.reason) == ("paused", "interrupted")
    assert "branch:pricing/step[0]" in state.units and "reduce" not in state.units
    outcome = resume(session_id, Probe(log).options(hitl_use_defaults=True), store=LocalStore(tmp_path / "sessions"))
    assert outcome.status == "completed"
    assert first_difference(expected, comparable(LocalStore(tmp_path / "sessions").load(session_id))) is None


def test_the_wall_time_budget_of_a_run_is_exit_20(tmp_path: Path) -> None:
    runtime = "runtime:\n  provider: synthetic\n  model_id: synthetic-1\n"
    spec = spec_variant(PARALLEL, tmp_path / "spec", {runtime: runtime + "  budgets:\n    max_duration_s: 0.001\n"})
    with pytest.raises(BudgetExceeded, match=r"time budget exceeded: .*max_duration_s=0\.001"):
        run_workflow(
            spec,
            Probe(ExecutionLog(tmp_path / "exec.log")).options(out_dir=tmp_path / "out", hitl_use_defaults=True),
            store=LocalStore(tmp_path / "sessions"),
        )
    assert not unit_threads()
