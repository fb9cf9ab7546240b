"""`runtime.budgets` (exit 20, across resumes, with the warning) and graph limits; `failure_policy` retries of
throttled and transiently failing model calls, each attempt recorded, none duplicating a committed turn."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from strands.types.exceptions import ModelThrottledException

from strands_durable import LocalStore, resume, run_workflow
from strands_durable.errors import BudgetExceeded, ExitCode, HitlPaused, WorkflowFailed, exit_code_for
from strands_durable.faults.kit.oracle import comparable, first_difference
from strands_durable.models.events import StreamFault
from tests.conftest import EXAMPLES
from tests.core.support import ExecutionLog
from tests.patterns.support import Probe, spec_variant

GRAPH = EXAMPLES / "graph-code-review.strands.yaml"
ESSAY = EXAMPLES / "evaluator-optimizer-essay.strands.yaml"
PARALLEL = EXAMPLES / "parallel-market-scan.strands.yaml"
RUNTIME = "runtime:\n  provider: synthetic\n  model_id: synthetic-1\n"


def with_runtime(source: Path, root: Path, extra: str, name: str = "spec") -> Path:
    return spec_variant(source, root / name, {RUNTIME: RUNTIME + extra})


def run(spec: Path, root: Path, probe: Probe | None = None, **options):
    probe = probe or Probe(ExecutionLog(root / "exec.log"))
    store = LocalStore(root / "sessions", strict=True)
    return run_workflow(spec, probe.options(out_dir=root / "out", **options), store=store), store, probe


def only_session(store: LocalStore):
    (session_id,) = store.session_ids()
    return store.load(session_id)


# -- budgets ---------------------------------------------------------------------------------------------


def test_token_budget_stops_the_run_with_exit_20_after_a_warning(tmp_path: Path) -> None:
    spec = with_runtime(ESSAY, tmp_path, "  budgets:\n    max_tokens: 1500\n    warn_threshold: 0.5\n")
    probe = Probe(ExecutionLog(tmp_path / "exec.log"))
    with pytest.raises(BudgetExceeded, match="max_tokens=1500") as exceeded:
        run(spec, tmp_path, probe)
    assert exit_code_for(exceeded.value) == ExitCode.BUDGET_EXCEEDED == 20
    state = only_session(LocalStore(tmp_path / "sessions"))
    assert state.status == "failed" and "token budget" in state.reason
    assert 1500 <= state.usage()["total"] < 1500 + 1500  # stopped at the first call after the limit
    assert [w for w in probe.warnings() if w.startswith("Token budget warning")]


def test_token_budget_counts_the_tokens_of_earlier_runs_of_the_session(tmp_path: Path) -> None:
    probe = Probe(ExecutionLog(tmp_path / "exec.log"))
    store = LocalStore(tmp_path / "sessions", strict=True)
    spec = spec_variant(PARALLEL, tmp_path / "spec", {})
    with pytest.raises(HitlPaused):
        run_workflow(spec, probe.options(out_dir=tmp_path / "out"), store=store)
    state = only_session(store)
    used = state.usage()["total"]
    # the user raises the budget to just above what the session used: the resumed run may call the model
    # once (the competitors branch's analyst); the next call exceeds the session's budget
    spec.write_text(spec.read_text().replace(RUNTIME, RUNTIME + f"  budgets:\n    max_tokens: {used + 1}\n"))
    again = Probe(ExecutionLog(tmp_path / "exec.log"))
    with pytest.raises(BudgetExceeded):
        resume(state.session_id, again.options(hitl_response="ok"), store=store)
    assert again.calls["analyst"] >= 1 and again.calls["editor"] == 0
    after = only_session(store)
    assert used < after.usage()["total"] < 2 * used, "only the session's earlier tokens can exceed used + 1"
    assert after.status == "failed" and "reduce" not in after.units


def test_step_budget_caps_the_units_of_a_session(tmp_path: Path) -> None:
    spec = with_runtime(EXAMPLES / "workflow-release-plan.strands.yaml", tmp_path, "  budgets:\n    max_steps: 2\n")
    with pytest.raises(BudgetExceeded, match="max_steps=2"):
        run(spec, tmp_path)
    assert {"task:research", "task:risks"} == only_session(LocalStore(tmp_path / "sessions")).units.keys()


def test_graph_max_steps_is_a_budget_and_max_iterations_a_failure(tmp_path: Path) -> None:
    spec = spec_variant(GRAPH, tmp_path / "steps", {"    max_steps: 30\n": "    max_steps: 3\n"})
    with pytest.raises(BudgetExceeded, match="graph stopped after 3 node runs") as exceeded:
        run(spec, tmp_path / "a")
    assert exit_code_for(exceeded.value) == 20
    spec = spec_variant(GRAPH, tmp_path / "iterations", {"    max_iterations: 8\n": "    max_iterations: 1\n"})
    with pytest.raises(
        WorkflowFailed, match=re.escape("'write' would run 2 times; pattern.config.max_iterations is 1")
    ):
        run(spec, tmp_path / "b")
    state = only_session(LocalStore(tmp_path / "b" / "sessions"))
    assert state.status == "failed" and state.pattern_state["path"] == ["write", "review"]


# -- retries ---------------------------------------------------------------------------------------------

POLICY = "  failure_policy:\n    retries: 3\n    backoff: exponential\n    wait_min: 0\n    wait_max: 0\n"


def test_throttled_calls_are_retried_and_recorded_and_the_run_matches_an_unthrottled_one(tmp_path: Path) -> None:
    spec = with_runtime(ESSAY, tmp_path, POLICY)
    outcome, store, _ = run(spec, tmp_path / "golden")
    expected = comparable(store.load(outcome.session_id))

    def throttle(agent: str, nth: int) -> BaseException | None:
        return ModelThrottledException("slow down") if agent == "critic" and nth in (1, 2, 4) else None

    probe = Probe(ExecutionLog(tmp_path / "exec.log"), fail=throttle)
    outcome, store, _ = run(spec, tmp_path / "flaky", probe)
    state = store.load(outcome.session_id)
    attempts = state.attempts["iteration[0]:evaluator"]
    assert [a["attempt"] for a in attempts] == [0, 1]
    assert "ModelThrottledException: slow down" in attempts[0]["error"]
    assert sum(len(v) for v in state.attempts.values()) == 3
    assert first_difference(expected, comparable(state)) is None  # no extra or duplicated turn anywhere


def test_a_stream_cut_mid_answer_is_retried_as_a_whole_call(tmp_path: Path) -> None:
    spec = with_runtime(GRAPH, tmp_path, POLICY)
    outcome, store, _ = run(spec, tmp_path / "golden")
    expected = comparable(store.load(outcome.session_id))
    probe = Probe(ExecutionLog(tmp_path / "exec.log"))
    fault = StreamFault("cut", after_events=3, times=2)
    outcome, store, _ = run(spec, tmp_path / "cut", probe, model_kwargs={"stream_fault": fault})
    state = store.load(outcome.session_id)
    assert sum(len(v) for v in state.attempts.values()) >= 2
    assert first_difference(expected, comparable(state)) is None


def test_retries_exhausted_fail_with_exit_10_and_resume_continues(tmp_path: Path) -> None:
    spec = with_runtime(ESSAY, tmp_path, POLICY.replace("retries: 3", "retries: 1"))
    probe = Probe(ExecutionLog(tmp_path / "exec.log"), fail=lambda agent, nth: ModelThrottledException("busy"))
    with pytest.raises(WorkflowFailed, match="failed after 2 attempt") as failed:
        run(spec, tmp_path, probe)
    assert exit_code_for(failed.value) == 10
    state = only_session(LocalStore(tmp_path / "sessions"))
    assert state.status == "failed" and len(state.attempts["iteration[0]:producer"]) == 1
    assert not state.conversations or not any(
        c.messages[-1]["role"] == "assistant" for c in state.conversations.values()
    )
    outcome = resume(
        state.session_id, Probe(ExecutionLog(tmp_path / "exec.log")).options(), store=LocalStore(tmp_path / "sessions")
    )
    assert outcome.status == "completed"


def test_a_non_transient_model_error_fails_at_once(tmp_path: Path) -> None:
    spec = with_runtime(ESSAY, tmp_path, POLICY)
    probe = Probe(ExecutionLog(tmp_path / "exec.log"), fail=lambda agent, nth: ValueError("bad request: schema"))
    with pytest.raises(WorkflowFailed, match="bad request: schema"):
        run(spec, tmp_path, probe)
    state = only_session(LocalStore(tmp_path / "sessions"))
    assert state.attempts == {} and probe.calls["writer"] == 1
