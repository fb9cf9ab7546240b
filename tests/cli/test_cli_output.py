"""The run reporters: the document's lines in plain mode, and the live display on a (forced) terminal."""

from __future__ import annotations

import io

import pytest

from strands_durable.cli.output import LineReporter, LiveReporter, total_tokens_line
from tests.conftest import EXAMPLES


def _drive(reporter) -> None:
    reporter.session_started("a1b2c3d4-0000-4000-8000-000000000000", "demo", resumed=True)
    reporter.warning("⚠ Warning: one\n  two")
    reporter.unit_skipped(0, "researcher", "step[0]")
    reporter.unit_started(1, 2, "writer", "step[1]")
    reporter.unit_completed(1, 2, "writer", "step[1]", 3000)
    reporter.finished("completed", 5000, 8000)


def test_line_reporter_prints_the_documents_resume_lines():
    out, err = io.StringIO(), io.StringIO()
    _drive(LineReporter(out, err))
    assert out.getvalue().splitlines() == [
        "Running workflow: demo",
        "Skipping completed step 0: researcher",
        "Executing step 1: writer",
        "Step 2/2: writer - EXECUTING",
        "Step 2/2: writer - COMPLETE (3000 tokens)",
        "✓ Workflow complete",
        "Total tokens: 8000 (5000 from resumed session + 3000 new)",
    ]
    assert err.getvalue().splitlines() == ["⚠ Warning: one", "  two"]


def test_line_reporter_prints_session_id_first_and_counts_without_a_total():
    out = io.StringIO()
    reporter = LineReporter(out, io.StringIO())
    reporter.session_started("abc", "demo", resumed=False)
    reporter.unit_started(4, None, "node", "node:x")
    reporter.finished("completed", 0, 12)
    assert out.getvalue().splitlines() == [
        "Session ID: abc",
        "Running workflow: demo",
        "Step 5: node - EXECUTING",
        "✓ Workflow complete",
        "Total tokens: 12",
    ]
    assert total_tokens_line(0, 12, resumed=False) == "Total tokens: 12"


def test_live_reporter_keeps_finished_lines_and_clears_the_spinner():
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    reporter = LiveReporter(out, io.StringIO(), console=console)
    _drive(reporter)
    reporter.close()
    text = out.getvalue()
    assert "Executing step 1: writer" in text
    assert "✓ Step 2/2: writer - COMPLETE (3000 tokens)" in text
    assert "Total tokens: 8000 (5000 from resumed session + 3000 new)" in text
    assert reporter._live is None


def _resume_after(spec_name: str, unit: str, tmp_path) -> tuple[list[str], list[str]]:
    """The lines of a run of the example that dies once `unit` is committed, and of its resume (real runs)."""
    from strands_durable import CrashPoints, InjectedCrash, LocalStore, RunOptions, resume, run_workflow
    from strands_durable.crashpoints import UnitBoundary

    store = LocalStore(tmp_path / "sessions")
    bus = CrashPoints()

    def crash(point) -> None:
        if point.site == "unit.after" and point.unit == unit:
            raise InjectedCrash(point)

    bus.subscribe(UnitBoundary, crash)
    first, again = io.StringIO(), io.StringIO()
    options = RunOptions(out_dir=tmp_path / "out", crash_points=bus, reporter=LineReporter(first, io.StringIO()))
    with pytest.raises(InjectedCrash):
        run_workflow(EXAMPLES / spec_name, options, store=store)
    (session_id,) = store.session_ids()
    resume(session_id, RunOptions(reporter=LineReporter(again, io.StringIO())), store=store)
    return first.getvalue().splitlines(), again.getvalue().splitlines()


def test_routing_names_the_router_by_role_and_numbers_the_route_steps_within_the_route(tmp_path):
    first, resumed = _resume_after("routing-support-triage.strands.yaml", "router", tmp_path)
    assert [line for line in first if " - " in line] == ["Router: triage - EXECUTING"]
    assert resumed[:5] == [
        "Running workflow: routing-support-triage",
        "Skipping completed Router: triage",
        "Executing step 0: accountant",
        "Step 1/1: accountant - EXECUTING",
        "Step 1/1: accountant - COMPLETE (403 tokens)",
    ]


def test_an_orchestrator_resume_names_its_units_by_role(tmp_path):
    _first, resumed = _resume_after("orchestrator-workers-survey.strands.yaml", "round[1]:orchestrator", tmp_path)
    skipped = [line for line in resumed if line.startswith("Skipping")]
    assert skipped == [
        "Skipping completed Planner (round 1): planner",
        "Skipping completed Worker 1/2 (round 1): worker",
        "Skipping completed Worker 2/2 (round 1): worker",
        "Skipping completed Planner (round 2): planner",
    ]
    assert not any(line.startswith(("Executing step", "Step ")) for line in resumed), resumed
    assert [line.split(" - ")[0] for line in resumed if line.endswith("EXECUTING")] == [
        "Worker 1/1 (round 2): worker",
        "Reducer: reducer",
        "Writer: writer",
    ]
