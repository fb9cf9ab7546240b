"""Completion orders of a spec workflow's concurrent units (`--strands-chaos-orders`): each layer's other orders are
priority permutations given to the lockstep scheduler, each with its own golden run, and the points inside the
layer are crashed and resumed in it. With `golden` the items are today's exactly; `all` explores every order of up
to 3 units and the coverage counts them; a runner bug that shows only when the later declared of two concurrent
tasks finishes first is found through an order alone, and its reproduce line fails the same way every time."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.plugin.planted_orders import SLOWER_REISSUED
from tests.plugin.support import EXAMPLES, RELEASE_PLAN, add_research_spec, summary

TODAYS_IDS = (Path(__file__).parent / "data" / "release_plan_item_ids.txt").read_text().split()
PARALLEL = EXAMPLES / "parallel-market-scan.strands.yaml"
ARGS = ("--strands-chaos", "--strands-chaos-schedules=0", "-p", "no:cacheprovider", "-p", "no:randomly")


def collected(result: pytest.RunResult, spec: str) -> list[str]:
    prefix = f"{spec}::"
    return [line.removeprefix(prefix) for line in result.stdout.lines if line.startswith(prefix)]


def test_the_golden_policy_collects_todays_items_and_the_default_one_other_order(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester, "plan.strands.yaml", RELEASE_PLAN)
    by_policy = {
        policy: collected(
            pytester.runpytest_inprocess(*ARGS, f"--strands-chaos-orders={policy}", "--collect-only", "-q"),
            "plan.strands.yaml",
        )
        for policy in ("golden", "default")
    }
    assert by_policy["golden"] == TODAYS_IDS
    todays, others = by_policy["default"][: len(TODAYS_IDS)], by_policy["default"][len(TODAYS_IDS) :]
    assert todays == TODAYS_IDS  # the golden order's items first, as today
    assert others[0] == "golden/layer[0]/order[1,0]"  # risks finishes before research: its own golden run
    inside = others[1:]
    assert inside[0] == "task:research:analyst/unit.before/order[1,0]"
    assert all(i.endswith("/order[1,0]") for i in inside)
    assert inside[-1] == "task:research:analyst/unit.after/order[1,0]"  # the layer's last job, finishing last
    assert not any(i.startswith(("task:plan:", "task:review:")) for i in inside)  # after the layer: not again


@pytest.mark.slow
def test_all_explores_every_order_of_three_branches_and_the_coverage_counts_them(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester, "scan.strands.yaml", PARALLEL)
    report = pytester.path / "chaos.json"
    limit = "--strands-chaos-max-points=4"
    result = pytester.runpytest_subprocess(
        *ARGS, limit, "--strands-chaos-orders=all", f"--strands-chaos-report={report}"
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    body = json.loads(report.read_text())
    goldens = sorted(i["nodeid"].split("::", 1)[1] for i in body["items"] if "::golden/" in i["nodeid"])
    assert goldens == [f"golden/layer[0]/order[{o}]" for o in ("0,1,2", "0,2,1", "1,0,2", "2,0,1", "2,1,0")]
    for label in ("0,1,2", "0,2,1", "1,0,2", "2,0,1", "2,1,0"):  # each order's points, crashed and resumed
        points = [
            i for i in body["items"] if i["nodeid"].endswith(f"/order[{label}]") and "::golden/" not in i["nodeid"]
        ]
        assert len(points) == 4 and all(i["outcome"] == "passed" for i in points)
    assert body["coverage"]["orders"] == {"explored": 6, "possible": 6}
    assert "strands-chaos: coverage orders: 6 of 6 completion orders explored" in result.stdout.str()
    assert summary(result)["points"] == 4 + 5 * 4
    default = pytester.runpytest_subprocess(*ARGS, limit)
    assert "strands-chaos: coverage orders: 2 of 6 completion orders explored" in default.stdout.str()


@pytest.mark.slow
def test_a_runner_reissuing_the_slower_task_is_found_only_through_an_order_and_replays(
    pytester: pytest.Pytester,
) -> None:
    add_research_spec(pytester, "plan.strands.yaml", RELEASE_PLAN)
    pytester.makeconftest(SLOWER_REISSUED)
    report = pytester.path / "chaos.json"
    result = pytester.runpytest_subprocess(*ARGS, f"--strands-chaos-report={report}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    items = json.loads(report.read_text())["items"]
    # the golden order never shows it: its items, the golden policy's run exactly (the test above), all pass here
    in_golden_order = sorted(i["nodeid"].split("::", 1)[1] for i in items if "/order[" not in i["nodeid"])
    assert in_golden_order == sorted(TODAYS_IDS)
    assert all(i["outcome"] == "passed" for i in items if "/order[" not in i["nodeid"])
    failing = [i for i in items if i["outcome"] == "failed"]
    assert failing and all(i["nodeid"].endswith("/order[1,0]") for i in failing)
    assert not any("::golden/" in i["nodeid"] for i in failing)  # the order was reached: its points found the bug
    rules = {p.split("] ")[0].lstrip("[") for i in failing for p in i["problems"]}
    assert "model-rerequest" in rules and "not-fired" not in rules, rules
    assert summary(result)["divergences"] == len(failing)
    item = failing[0]
    argv = shlex.split(item["reproduce"])
    assert argv[0] == "pytest" and item["nodeid"].split("::", 1)[1] in argv[-1]
    for _ in range(5):
        again = subprocess.run(
            [sys.executable, "-m", "pytest", *argv[1:]], cwd=pytester.path, capture_output=True, text=True, timeout=300
        )
        assert again.returncode == pytest.ExitCode.TESTS_FAILED, again.stdout[-2000:]
        assert "1 failed" in again.stdout.splitlines()[-1]
        assert all(problem.splitlines()[0] in again.stdout for problem in item["problems"])
