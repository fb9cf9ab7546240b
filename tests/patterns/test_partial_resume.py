"""Per pattern, the partial cases: what was committed before an interruption is kept and never redone, what
was not is done exactly once more. Tools count their executions in an fsynced file outside the session."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable import InjectedCrash, LocalStore, resume, run_workflow
from strands_durable.errors import WorkflowFailed
from strands_durable.faults.kit.oracle import committed_request_digests, comparable, first_difference
from tests.conftest import EXAMPLES
from tests.core.support import ExecutionLog, crash_at
from tests.patterns.support import Probe

PARALLEL = EXAMPLES / "parallel-market-scan.strands.yaml"
WORKFLOW = EXAMPLES / "workflow-release-plan.strands.yaml"
ROUTING = EXAMPLES / "routing-support-triage.strands.yaml"
ORCHESTRATOR = EXAMPLES / "orchestrator-workers-survey.strands.yaml"
GRAPH = EXAMPLES / "graph-code-review.strands.yaml"


def golden(spec: Path, root: Path, **options) -> tuple[dict, Probe]:
    probe = Probe(ExecutionLog(root / "golden-exec.log"))
    store = LocalStore(root / "golden", strict=True)
    outcome = run_workflow(spec, probe.options(out_dir=root / "golden-out", **options), store=store)
    return comparable(store.load(outcome.session_id)), probe


def crash_then_resume(spec: Path, root: Path, target: str, **options):
    """Crash at `target`, resume in fresh objects: (state at the crash, final state, first probe, resume probe)."""
    log = ExecutionLog(root / "exec.log")
    first = Probe(log)
    store = LocalStore(root / "sessions", strict=True)
    with pytest.raises(InjectedCrash):
        run_workflow(spec, first.options(out_dir=root / "out", crash_points=crash_at(target), **options), store=store)
    (session_id,) = store.session_ids()
    crashed = LocalStore(root / "sessions").load(session_id)
    again = Probe(log)
    outcome = resume(session_id, again.options(**options), store=LocalStore(root / "sessions", strict=True))
    assert outcome.status == "completed"
    final = LocalStore(root / "sessions").load(session_id)
    assert not [d for d in again.requests.digests if d in committed_request_digests(crashed)]
    assert all(count == 1 for count in log.counts().values()) or _only_uncommitted_reruns(crashed, log)
    return crashed, final, first, again


def _only_uncommitted_reruns(crashed, log: ExecutionLog) -> bool:
    from strands_durable.faults.kit.oracle import committed_tool_ids

    done = committed_tool_ids(crashed)
    return all(count == 1 for tool_id, count in log.counts().items() if tool_id in done)


def completed_units(state) -> set[str]:
    return {unit for unit, record in state.units.items() if record.get("status") == "completed"}


def test_crash_after_one_parallel_branch_committed_reruns_only_the_others(tmp_path: Path) -> None:
    expected, _ = golden(PARALLEL, tmp_path, hitl_use_defaults=True)
    crashed, final, _, again = crash_then_resume(
        PARALLEL, tmp_path, "branch:pricing/step[0]:researcher/unit.after", hitl_use_defaults=True
    )
    assert "branch:pricing/step[0]" in completed_units(crashed)
    assert "branch:pricing/step[0]" in again.skipped()
    assert again.calls["researcher"] <= 1  # only the competitors branch's researcher may still run
    assert "reduce" not in completed_units(crashed) and again.calls["editor"] == 1
    rerun = {unit for unit in again.started() if unit.startswith("branch:")}
    assert rerun == {u for u in expected["units"] if u.startswith("branch:")} - completed_units(crashed) - {
        "branch:competitors/step[1]"  # the HITL step is answered, not started
    }
    assert first_difference(expected, comparable(final)) is None


def test_crash_mid_layer_keeps_the_finished_task(tmp_path: Path) -> None:
    expected, _ = golden(WORKFLOW, tmp_path)
    crashed, final, _, again = crash_then_resume(WORKFLOW, tmp_path, "task:research:analyst/unit.after")
    assert "task:research" in completed_units(crashed) and "task:plan" not in completed_units(crashed)
    assert "task:research" in again.skipped()
    assert "task:research" not in again.started()
    assert first_difference(expected, comparable(final)) is None


def test_a_failing_task_lets_its_running_sibling_finish_and_commit(tmp_path: Path) -> None:
    expected, _ = golden(WORKFLOW, tmp_path)
    log = ExecutionLog(tmp_path / "exec.log")
    boom = {"raised": False}

    def risks_fail(agent: str, nth: int) -> BaseException | None:
        # the analyst serves both tasks of the first layer; its first call belongs to one of them
        if agent == "analyst" and not boom["raised"]:
            boom["raised"] = True
            return RuntimeError("provider exploded")
        return None

    first = Probe(log, fail=risks_fail)
    store = LocalStore(tmp_path / "sessions", strict=True)
    with pytest.raises(WorkflowFailed, match="provider exploded"):
        run_workflow(WORKFLOW, first.options(out_dir=tmp_path / "out"), store=store)
    (session_id,) = store.session_ids()
    failed = store.load(session_id)
    assert failed.status == "failed"
    layer = {"task:research", "task:risks"}
    assert len(completed_units(failed) & layer) == 1, "the sibling that did not fail finished and committed"
    finished = (completed_units(failed) & layer).pop()
    again = Probe(log)
    outcome = resume(session_id, again.options(), store=LocalStore(tmp_path / "sessions", strict=True))
    assert outcome.status == "completed"
    assert finished in again.skipped() and finished not in again.started()
    assert first_difference(expected, comparable(LocalStore(tmp_path / "sessions").load(session_id))) is None


def test_crash_after_the_routing_decision_never_asks_the_router_again(tmp_path: Path) -> None:
    expected, golden_probe = golden(ROUTING, tmp_path)
    crashed, final, _, again = crash_then_resume(ROUTING, tmp_path, "router:triage/unit.after")
    assert crashed.units["router"]["chosen_route"] == crashed.pattern_state["router_decision"]["chosen_route"]
    assert golden_probe.calls["triage"] >= 1 and again.calls["triage"] == 0
    assert "router" in again.skipped()
    assert first_difference(expected, comparable(final)) is None


def test_crash_inside_the_first_route_step_resumes_that_step(tmp_path: Path) -> None:
    expected, _ = golden(ROUTING, tmp_path)
    route = expected["units"].keys() - {"router"}
    first_step = sorted(u for u in route if u.endswith("step[0]"))[0]
    agent = {"route:technical": "engineer", "route:billing": "accountant", "route:general": "helper"}[
        first_step.split("/")[0]
    ]
    _, final, _, again = crash_then_resume(ROUTING, tmp_path, f"{first_step}:{agent}/turn[0]/model.answered")
    assert again.calls["triage"] == 0
    assert first_difference(expected, comparable(final)) is None


def test_crash_mid_worker_keeps_the_decomposition_and_finished_workers(tmp_path: Path) -> None:
    expected, golden_probe = golden(ORCHESTRATOR, tmp_path)
    crashed, final, _, again = crash_then_resume(ORCHESTRATOR, tmp_path, "round[0]:worker[1]:worker/unit.after")
    tasks = crashed.units["round[0]:orchestrator"]["tasks"]
    assert crashed.pattern_state["rounds"][0]["tasks"] == tasks
    assert "round[0]:worker[1]" in completed_units(crashed)
    assert "round[0]:orchestrator" in again.skipped() and "round[0]:worker[1]" in again.skipped()
    # the planner is asked only for round 1 after the resume (round 0's decomposition is kept)
    assert golden_probe.calls["planner"] == 2 and again.calls["planner"] == 1
    assert final.units["round[0]:orchestrator"]["tasks"] == tasks
    assert first_difference(expected, comparable(final)) is None


def test_crash_inside_a_graph_loop_resumes_at_the_same_iteration(tmp_path: Path) -> None:
    expected, golden_probe = golden(GRAPH, tmp_path)
    assert expected["units"].keys() >= {"node:write#3", "node:review#3"}, "seed 0 loops at least three times"
    crashed, final, _, again = crash_then_resume(GRAPH, tmp_path, "node:write#3:coder/turn[0]/model.answered")
    assert crashed.pattern_state["iteration_counts"] == {"write": 2, "review": 2}
    assert crashed.pattern_state["to_visit"] == ["write"]
    assert again.started()[0] == "node:write#3"
    assert again.calls["reviewer"] == golden_probe.calls["reviewer"] - 2
    assert final.pattern_state["path"][:5] == ["write", "review", "write", "review", "write"]
    assert first_difference(expected, comparable(final)) is None
