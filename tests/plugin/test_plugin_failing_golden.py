"""Workflows whose golden run fails deterministically (a graph past `max_iterations`, a token budget exceeded) are
explored too: every crash point must resume to the same failure, status and stored state, and a second summary
line names them (the summary line CI greps is unchanged)."""

from __future__ import annotations

import json

import pytest

from tests.plugin.support import summary

ENDLESS_REVIEW = """
version: 0
name: endless-review
runtime:
  provider: synthetic
  model_id: synthetic-1
agents:
  coder:
    prompt: You write code.
    tools: [calculator]
  reviewer:
    prompt: You review code.
pattern:
  type: graph
  config:
    max_iterations: 2
    nodes:
      write:
        agent: coder
        input: "Write a parser."
      review:
        agent: reviewer
        input: "Review: {{ nodes.write.response }}"
    edges:
      - from: write
        to: [review]
      - from: review
        to: [write]
"""

OVER_BUDGET = """
version: 0
name: over-budget
runtime:
  provider: synthetic
  model_id: synthetic-1
  budgets:
    max_tokens: 1200
agents:
  researcher:
    prompt: You research.
    tools: [calculator]
pattern:
  type: chain
  config:
    steps:
      - agent: researcher
        input: "Research durable workflows."
      - agent: researcher
        input: "Go deeper: {{ last_response }}"
      - agent: researcher
        input: "Deeper still: {{ last_response }}"
      - agent: researcher
        input: "Summarise: {{ last_response }}"
"""

# the graph forgets, on resume, how often each node already ran: the resumed run loops longer and fails later
FORGETS_ITERATIONS = """
from strands_durable.runner.patterns import graph

_real = graph.run_graph

def _forgetful(ctx):
    saved = ctx.state.pattern_state
    if saved.get("iteration_counts"):
        ctx.state.pattern_state = {**saved, "iteration_counts": {}}
    return _real(ctx)

graph.run_graph = _forgetful
"""

ARGS = ("--strands-chaos", "--strands-chaos-schedules=2", "-p", "no:cacheprovider", "-q")


def _specs(pytester: pytest.Pytester) -> None:
    (pytester.path / "endless-review.strands.yaml").write_text(ENDLESS_REVIEW)
    (pytester.path / "over-budget.strands.yaml").write_text(OVER_BUDGET)


@pytest.mark.slow
def test_every_crash_point_of_a_failing_golden_run_resumes_to_the_same_failure(pytester: pytest.Pytester) -> None:
    _specs(pytester)
    report = pytester.path / "chaos.json"
    result = pytester.runpytest_subprocess(*ARGS, f"--strands-chaos-report={report}")
    totals = summary(result)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert totals["workflows"] == 2 and totals["points"] > 50 and totals["divergences"] == 0
    result.stdout.fnmatch_lines(
        [
            "strands-chaos: * crash points explored in 2 workflows *",
            "strands-chaos: 2 workflows explored to their deterministic failure (every crash point resumed to the "
            "same failure): endless-review.strands.yaml (WorkflowFailed), over-budget.strands.yaml (BudgetExceeded)",
        ]
    )
    body = json.loads(report.read_text())
    assert body["failing_golden"]["endless-review.strands.yaml"].startswith(
        "WorkflowFailed: graph node 'write' would run 3 times"
    )
    assert body["failing_golden"]["over-budget.strands.yaml"].startswith("BudgetExceeded: token budget exceeded")


@pytest.mark.slow
def test_a_resume_that_does_not_reach_the_same_failure_is_caught(pytester: pytest.Pytester) -> None:
    (pytester.path / "endless-review.strands.yaml").write_text(ENDLESS_REVIEW)
    pytester.makeconftest(FORGETS_ITERATIONS)
    result = pytester.runpytest_subprocess(*ARGS)
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert summary(result)["divergences"] > 0
    assert "(the golden run failed with WorkflowFailed: graph node 'write' would run 3 times" in out, out[-3000:]


UNREACHABLE_EDGE = """
version: 0
name: triage
runtime:
  provider: synthetic
  model_id: synthetic-1
agents:
  triager:
    prompt: You triage tickets.
pattern:
  type: graph
  config:
    nodes:
      triage:
        agent: triager
        input: "Triage: the printer is on fire."
      escalate:
        agent: triager
        input: "Escalate: {{ nodes.triage.response }}"
      close:
        agent: triager
        input: "Close: {{ nodes.triage.response }}"
    edges:
      - from: triage
        choose:
          - when: "{{ total_steps > 100 }}"
            to: escalate
          - when: else
            to: close
"""


@pytest.mark.slow
def test_graph_edges_no_golden_run_took_are_named(pytester: pytest.Pytester) -> None:
    (pytester.path / "triage.strands.yaml").write_text(UNREACHABLE_EDGE)
    report = pytester.path / "chaos.json"
    result = pytester.runpytest_subprocess(*ARGS, f"--strands-chaos-report={report}")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(
        ["strands-chaos: graph edges no golden run took with seed 0: triage.strands.yaml: triage -> escalate"]
    )
    assert json.loads(report.read_text())["untaken_edges"] == {"triage.strands.yaml": "triage -> escalate"}
