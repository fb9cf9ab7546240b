"""The plugin catches real bugs: each mutation planted in the product below must make `--strands-chaos` fail on
the example research chain (every crash point, default convergence mode)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugin.support import MUTATIONS, RELEASE_PLAN, RESEARCH, add_research_spec, summary

ARGS = ("--strands-chaos", "--strands-chaos-schedules=0", "-p", "no:cacheprovider", "-q")


def run_mutated(pytester: pytest.Pytester, mutation: str, *, spec: Path = RESEARCH) -> pytest.RunResult:
    add_research_spec(pytester, source=spec)
    pytester.makeconftest(MUTATIONS[mutation])
    return pytester.runpytest_subprocess(*ARGS)


@pytest.mark.slow
def test_a_store_that_forgets_its_last_commit_is_caught(pytester: pytest.Pytester) -> None:
    result = run_mutated(pytester, "store_forgets_last_commit")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert summary(result)["divergences"] > 0
    assert "[tool-rerun]" in out or "[model-rerequest]" in out


@pytest.mark.slow
def test_a_runner_that_reruns_committed_tools_is_caught(pytester: pytest.Pytester) -> None:
    result = run_mutated(pytester, "runner_reruns_committed_tools")
    out = result.stdout.str()
    assert summary(result)["divergences"] > 0
    assert "[tool-rerun]" in out and "committed tool call step[" in out


@pytest.mark.slow
def test_a_runner_that_reruns_a_non_idempotent_tool_after_a_crash_is_caught(pytester: pytest.Pytester) -> None:
    result = run_mutated(pytester, "runner_reruns_non_idempotent_tools", spec=RELEASE_PLAN)
    out = result.stdout.str()
    assert summary(result)["divergences"] > 0
    assert "[tool-rerun]" in out and "non-idempotent tool call task:plan:planner/" in out and ":file_write" in out


@pytest.mark.slow
def test_the_unmutated_product_passes_a_spec_with_a_non_idempotent_tool(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester, source=RELEASE_PLAN)
    report = pytester.path / "chaos.json"
    result = pytester.runpytest_subprocess(*ARGS, f"--strands-chaos-report={report}")
    totals = summary(result)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert totals["points"] > 80 and totals["divergences"] == 0 and totals["invalid"] == 0
    explored = json.dumps(json.loads(report.read_text())["items"])
    assert "file_write/started/store.after_commit" in explored and "file_write/tool.executed" in explored


@pytest.mark.slow
def test_a_history_left_with_an_orphan_tool_use_is_caught(pytester: pytest.Pytester) -> None:
    result = run_mutated(pytester, "orphan_tool_use_after_resume")
    assert summary(result)["invalid"] > 0
    assert "[invalid-history]" in result.stdout.str()


@pytest.mark.slow
def test_state_kept_only_in_memory_that_surfaces_two_units_later_is_caught(pytester: pytest.Pytester) -> None:
    result = run_mutated(pytester, "memory_only_state_two_units_later")
    out = result.stdout.str()
    totals = summary(result)
    assert totals["divergences"] > 0 and totals["invalid"] == 0
    assert "research.strands.yaml::golden PASSED" not in out  # -q: only failures are listed by name
    failed = [line for line in result.stdout.lines if line.startswith("FAILED research.strands.yaml::")]
    assert failed and all("step[2]" in line or "step[1]" in line for line in failed), failed
    assert any("step[2]:writer/unit.before" in line for line in failed)
    assert "--- golden" in out and "+++ resumed" in out  # the first differing unit as a readable diff


@pytest.mark.slow
def test_the_unmutated_product_passes_every_point(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester)
    result = pytester.runpytest_subprocess(*ARGS)
    totals = summary(result)
    assert result.ret == pytest.ExitCode.OK
    assert totals["points"] > 80 and totals["divergences"] == 0 and totals["invalid"] == 0
