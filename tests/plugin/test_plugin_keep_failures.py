"""`--strands-chaos-keep-failures=DIR`: the schedules item's failing multi-fault schedule, shrunk by hypothesis to a
minimal one, is written as a plain pytest file that imports only public names (it asks the `strands_chaos` fixture
to run the schedule) and, run on its own, fails the same way. A schedule may run in another completion order of a
layer's concurrent units: a bug only that order shows is kept with its order."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.plugin.planted_orders import SLOWER_REISSUED
from tests.plugin.support import MUTATIONS, RELEASE_PLAN, add_research_spec

ARGS = ("--strands-chaos", "--strands-chaos-max-points=0", "-p", "no:cacheprovider", "-p", "no:randomly")


def rule_lines(text: str) -> list[str]:
    """The failure's crash-point line and rule lines, in order."""
    return [line.strip().removeprefix("E").strip() for line in text.splitlines() if _is_rule(line)]


def _is_rule(line: str) -> bool:
    stripped = line.strip().removeprefix("E").strip()
    return stripped.startswith(("crash point: ", "[")) and not stripped.startswith("[gw")


def imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module or "")
    return found


def run_kept(pytester: pytest.Pytester, kept: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "--strands-chaos", "-p", "no:randomly", "-p", "no:cacheprovider"]
    return subprocess.run([*command, str(kept)], cwd=pytester.path, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_a_shrunk_failing_schedule_is_kept_as_a_plain_test_that_fails_the_same_way(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester)
    pytester.makeconftest(MUTATIONS["runner_reruns_committed_tools"])  # a planted bug: some schedules fail
    result = pytester.runpytest_subprocess(*ARGS, "--strands-chaos-schedules=5", "--strands-chaos-keep-failures=kept")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "minimal failing schedule of" in out
    (kept,) = sorted((pytester.path / "kept").glob("test_*.py"))
    assert f"kept as: {kept}" in out
    assert imported_modules(kept) <= {"pathlib", "pytest"}  # public names only: the fixture does the work
    expected = rule_lines(out[out.index("minimal failing schedule of") : out.index("kept as: ")])
    schedule = expected[0].removeprefix("crash point: ").split(" -> ")
    assert len(schedule) == 2 and schedule[0] == "step[0]:researcher/unit.before"  # shrunk: the fewest, earliest
    assert any(line.startswith("[tool-rerun]") for line in expected)
    for _ in range(2):
        again = run_kept(pytester, kept)
        assert again.returncode == pytest.ExitCode.TESTS_FAILED, again.stdout[-3000:]
        assert "1 failed" in again.stdout.splitlines()[-1]
        shown = again.stdout[again.stdout.index("failing schedule of") :]
        assert rule_lines(shown)[: len(expected)] == expected
    ok = subprocess.run(  # without the planted bug the kept test passes: it fails by the bug, not by itself
        [sys.executable, "-m", "pytest", "--strands-chaos", "-p", "no:randomly", "--noconftest", str(kept)],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ok.returncode == pytest.ExitCode.OK, ok.stdout[-3000:]


@pytest.mark.slow
def test_a_schedule_may_run_in_another_unit_order_and_is_kept_with_it(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester, "plan.strands.yaml", RELEASE_PLAN)
    pytester.makeconftest(SLOWER_REISSUED)  # a planted bug only another completion order of the layer shows
    schedules = ("--strands-chaos-schedules=10", "--strands-chaos-keep-failures=kept")
    golden = pytester.runpytest_subprocess(*ARGS, *schedules, "--strands-chaos-orders=golden")
    assert golden.ret == pytest.ExitCode.OK, golden.stdout.str()[-3000:]  # the golden order's schedules pass
    assert not (pytester.path / "kept").exists()
    result = pytester.runpytest_subprocess(*ARGS, *schedules)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "in the completion order: task:risks, task:research first" in out
    (kept,) = sorted((pytester.path / "kept").glob("test_*.py"))
    assert "UNIT_ORDER = [\n    'task:risks',\n    'task:research',\n]" in kept.read_text()
    expected = rule_lines(out[out.index("minimal failing schedule of") : out.index("in the completion order")])
    assert any(line.startswith("[model-rerequest]") for line in expected)
    again = run_kept(pytester, kept)
    assert again.returncode == pytest.ExitCode.TESTS_FAILED, again.stdout[-3000:]
    assert rule_lines(again.stdout[again.stdout.index("failing schedule of") :])[: len(expected)] == expected
