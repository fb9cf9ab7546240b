"""Human in the loop in every pattern that allows it: a pause is exit 19 with status paused/hitl and the
question shown; `hitl_response` continues; `timeout_seconds` falls back to `default`; concurrent units that are
not paused finish and commit before the run pauses; one question is pending at a time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from strands_durable import LocalStore, resume, run_workflow
from strands_durable.errors import ExitCode, HitlPaused, WorkflowFailed, exit_code_for
from tests.conftest import EXAMPLES
from tests.core.support import ExecutionLog
from tests.patterns.support import Probe, spec_variant

SPECS = Path(__file__).parent / "specs"
PARALLEL = EXAMPLES / "parallel-market-scan.strands.yaml"


def start(spec: Path, root: Path, **options) -> tuple[str, LocalStore, Probe]:
    probe = Probe(ExecutionLog(root / "exec.log"))
    store = LocalStore(root / "sessions", strict=True)
    with pytest.raises(HitlPaused) as paused:
        run_workflow(spec, probe.options(out_dir=root / "out", **options), store=store)
    assert exit_code_for(paused.value) == ExitCode.HITL_PAUSED == 19
    (session_id,) = store.session_ids()
    return session_id, store, probe


def test_a_paused_parallel_branch_lets_the_other_branches_finish_and_commit(tmp_path: Path) -> None:
    session_id, store, _ = start(PARALLEL, tmp_path)
    state = store.load(session_id)
    assert (state.status, state.reason) == ("paused", "hitl")
    pending = state.pattern_state["pending_hitl"]
    assert pending["unit"] == "branch:competitors/step[1]"
    assert "Are the competitor figures plausible?" in pending["prompt"] and pending["context"].strip()
    assert {"branch:pricing/step[0]", "branch:trends/step[0]", "branch:competitors/step[0]"} <= state.units.keys()
    assert "reduce" not in state.units and "branch:competitors/step[2]" not in state.units
    assert state.pattern_state["completed_branches"] == ["pricing", "trends"]

    again = Probe(ExecutionLog(tmp_path / "exec.log"))
    outcome = resume(session_id, again.options(hitl_response="looks right"), store=LocalStore(tmp_path / "sessions"))
    assert outcome.status == "completed"
    final = store.load(session_id)
    assert final.units["branch:competitors/step[1]"]["response"] == "looks right"
    assert {"branch:pricing/step[0]", "branch:trends/step[0]", "branch:competitors/step[0]"} <= again.skipped()
    assert again.calls["researcher"] == 0 and again.calls["editor"] == 1
    assert "pending_hitl" not in final.pattern_state


def test_resume_without_an_answer_pauses_again_and_stays_paused(tmp_path: Path) -> None:
    session_id, store, _ = start(PARALLEL, tmp_path)
    again = Probe(ExecutionLog(tmp_path / "exec.log"))
    with pytest.raises(HitlPaused, match="competitor figures"):
        resume(session_id, again.options(), store=LocalStore(tmp_path / "sessions"))
    state = store.load(session_id)
    assert (state.status, state.reason) == ("paused", "hitl")
    assert sum(again.calls.values()) == 0


def test_one_question_at_a_time_and_a_timeout_answers_with_the_default(tmp_path: Path) -> None:
    spec = SPECS / "workflow-two-questions.strands.yaml"
    session_id, store, _ = start(spec, tmp_path)
    state = store.load(session_id)
    assert state.pattern_state["pending_hitl"]["unit"] == "task:budget"
    assert "task:draft" in state.units, "the agent task of the same layer finished and committed"
    assert "task:deadline" not in state.units

    # the answer goes to the pending question; the second question is asked next
    with pytest.raises(HitlPaused, match="What is the deadline"):
        resume(session_id, Probe(ExecutionLog(tmp_path / "e")).options(hitl_response="100k"), store=store)
    state = store.load(session_id)
    assert state.units["task:budget"]["response"] == "100k"
    assert (state.status, state.reason) == ("paused", "hitl")
    assert state.pattern_state["pending_hitl"]["unit"] == "task:deadline"

    time.sleep(1.1)  # the deadline question's timeout_seconds (1) passes: its default answers it
    outcome = resume(session_id, Probe(ExecutionLog(tmp_path / "e")).options(), store=store)
    assert outcome.status == "completed"
    final = store.load(session_id)
    assert final.units["task:deadline"]["response"] == "next week"
    assert (tmp_path / "out" / "summary.md").read_text().startswith("100k / next week")


def test_routing_review_can_override_the_route(tmp_path: Path) -> None:
    spec = spec_variant(
        EXAMPLES / "routing-support-triage.strands.yaml",
        tmp_path / "spec",
        {
            "    routes:\n": "      review_router:\n        type: hitl\n"
            '        prompt: "Route {{ router.chosen_route }}: reply approved or route:<name>"\n'
            "    routes:\n"
        },
    )
    session_id, store, _ = start(spec, tmp_path)
    state = store.load(session_id)
    assert state.units["router"]["chosen_route"] in {"technical", "billing", "general"}
    override = "general" if state.units["router"]["chosen_route"] != "general" else "billing"
    with pytest.raises(WorkflowFailed, match="names no route"):
        resume(session_id, Probe(ExecutionLog(tmp_path / "e")).options(hitl_response="route:nowhere"), store=store)
    again = Probe(ExecutionLog(tmp_path / "e"))
    outcome = resume(session_id, again.options(hitl_response=f"route:{override}"), store=store)
    assert outcome.status == "completed"
    final = store.load(session_id)
    assert final.units["router.review"]["chosen_route"] == override
    assert any(unit.startswith(f"route:{override}/") for unit in final.units)
    assert again.calls["triage"] == 0
    assert (tmp_path / "out" / f"support-{override}.md").exists()


def test_evaluator_review_gate_sees_the_iterations_and_stop_ends_the_loop(tmp_path: Path) -> None:
    spec = spec_variant(
        EXAMPLES / "evaluator-optimizer-essay.strands.yaml",
        tmp_path / "spec",
        {
            "    revise_prompt: |\n": "    review_gate:\n      type: hitl\n"
            '      prompt: "Iteration {{ iteration_index }} scored {{ iterations[-1].score }}: continue or stop?"\n'
            '      context_display: "{{ iterations[0].draft_preview | truncate(40) }} {{ iterations[0].issues }}"\n'
            "    revise_prompt: |\n"
        },
    )
    session_id, store, _ = start(spec, tmp_path)
    state = store.load(session_id)
    score = state.units["iteration[0]:evaluator"]["score"]
    assert state.pattern_state["pending_hitl"]["prompt"] == f"Iteration 0 scored {score}: continue or stop?"
    outcome = resume(session_id, Probe(ExecutionLog(tmp_path / "e")).options(hitl_response="stop"), store=store)
    assert outcome.status == "completed"
    final = store.load(session_id)
    assert final.pattern_state["stopped_by"] == "review_gate"
    assert "iteration[1]:producer" not in final.units


def test_orchestrator_decomposition_review_pauses_before_any_worker(tmp_path: Path) -> None:
    spec = spec_variant(
        EXAMPLES / "orchestrator-workers-survey.strands.yaml",
        tmp_path / "spec",
        {
            "    worker_template:\n": "    decomposition_review:\n      type: hitl\n"
            '      prompt: "Approve {{ orchestrator_response | truncate(30) }}?"\n'
            "    worker_template:\n"
        },
    )
    session_id, store, _ = start(spec, tmp_path)
    state = store.load(session_id)
    assert state.units["round[0]:orchestrator"]["tasks"]
    assert not [unit for unit in state.units if ":worker[" in unit]
    with pytest.raises(HitlPaused):  # round 1 asks again after its own decomposition
        resume(session_id, Probe(ExecutionLog(tmp_path / "e")).options(hitl_response="approved"), store=store)
    outcome = resume(session_id, Probe(ExecutionLog(tmp_path / "e")).options(hitl_response="approved"), store=store)
    assert outcome.status == "completed"
