"""Completion orders of a turn's concurrent tools (`--strands-chaos-orders`): each order other than the golden
run's gets its own golden run, with the turn's results held in that order by a hook after the user's hooks, and
the points inside the turn are crashed and resumed like any other; the executor the user chose is kept. With
`golden` the items are today's exactly; a bug that shows only when a later tool finishes first is found through an
order, and its reproduce line fails the same way."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.plugin.support import summary

TODAYS_IDS = (Path(__file__).parent / "data" / "ledger_agent_item_ids.txt").read_text().split()

FACTORIES = """
import pytest
from strands import Agent, tool

from strands_durable.agent.durable import InvocationHooks, _tool_uses
from strands_durable.faults.agents.examples import LEDGER_PROMPTS, ledger_agent
from strands_durable.models.scripted import ScriptedModel
from strands_durable.sdk import DurableSessionManager

pytestmark = pytest.mark.strands_chaos(prompts=list(LEDGER_PROMPTS[:1]))


def build_agent_ledger(ctx):
    return ledger_agent(ctx)


class _KeyedByArrival(InvocationHooks):  # a planted bug: the n-th result of a turn is stored under its n-th call
    def _commit_result(self, result, tool_path, *, final=False, durable=True):
        conv = self.conv
        if not final and conv is not None:
            uses = next((_tool_uses(m) for m in reversed(conv.messages) if _tool_uses(m)), [])
            ids = [use["toolUseId"] for use in uses]
            if result["toolUseId"] in ids:
                arrived = sum(1 for i in ids if i in conv.tool_results)
                result = {**result, "toolUseId": ids[min(arrived, len(ids) - 1)]}
        super()._commit_result(result, tool_path, final=final, durable=durable)


class KeyedByArrival(DurableSessionManager):
    def _hooks(self, *args):
        hooks = super()._hooks(*args)
        hooks.__class__ = _KeyedByArrival
        return hooks
"""

MUTANT = (
    FACTORIES
    + """

def build_agent_keyed_by_arrival(ctx):
    return ledger_agent(ctx, KeyedByArrival)
"""
)

THREE_TOOLS = (
    FACTORIES
    + '''

@pytest.mark.strands_chaos(prompts=["Look up three cities."], max_points=2)
def three_lookups(ctx):
    @tool
    async def lookup(city: str) -> str:
        """Look up a city."""
        return f"{city}: found"

    script = [[{"name": "lookup", "input": {"city": c}} for c in ("Oslo", "Lima", "Pune")], "Found all three."]
    manager = DurableSessionManager(ctx.session_id, ctx.storage_dir)
    return Agent(model=ScriptedModel(script), tools=[lookup], callback_handler=None, session_manager=manager)
'''
)

ARGS = ("--strands-chaos", "--strands-chaos-schedules=0", "-p", "no:cacheprovider", "-p", "no:randomly")


def collected(result: pytest.RunResult, factory: str) -> list[str]:
    prefix = f"test_agents.py::{factory}::"
    return [line.removeprefix(prefix) for line in result.stdout.lines if line.startswith(prefix)]


def test_the_golden_policy_collects_todays_items_exactly(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agents=FACTORIES)
    golden = pytester.runpytest_inprocess(*ARGS, "--strands-chaos-orders=golden", "--collect-only", "-q")
    assert collected(golden, "build_agent_ledger") == TODAYS_IDS
    default = pytester.runpytest_inprocess(*ARGS, "--collect-only", "-q")
    ids = collected(default, "build_agent_ledger")
    count = len(TODAYS_IDS)
    assert ids[:count] == TODAYS_IDS  # the golden order's items first, as today
    assert ids[count] == "golden/batch[0]/order[1,0]"  # then the other order's golden run and its points
    inside = ids[count + 1 :]
    assert len(inside) > 10 and all(i.endswith("/order[1,0]") for i in inside)
    assert any(":pay/tool.committed/" in i for i in inside) and any(":note/tool.committed/" in i for i in inside)


@pytest.mark.slow
def test_every_order_of_three_tools_with_all_and_the_coverage_counts_them(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agents=THREE_TOOLS)
    report = pytester.path / "chaos.json"
    result = pytester.runpytest_subprocess(
        *ARGS, "--strands-chaos-orders=all", "-k", "three_lookups", f"--strands-chaos-report={report}", "-q"
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    body = json.loads(report.read_text())
    goldens = sorted(i["nodeid"].rsplit("::", 1)[1] for i in body["items"] if "::golden/" in i["nodeid"])
    assert len(goldens) == 5 and "golden/batch[0]/order[0,1,2]" not in goldens  # 3! - the golden run's own
    assert body["coverage"]["orders"] == {"explored": 6, "possible": 6}
    assert "strands-chaos: coverage orders: 6 of 6 completion orders explored" in result.stdout.str()
    default = pytester.runpytest_subprocess(*ARGS, "-k", "three_lookups", "-q")
    assert "strands-chaos: coverage orders: 2 of 6 completion orders explored" in default.stdout.str()


@pytest.mark.slow
def test_a_result_keyed_by_arrival_is_found_only_through_an_order_and_replays(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agents=MUTANT)
    only = ("-k", "keyed_by_arrival")
    report = pytester.path / "chaos.json"
    result = pytester.runpytest_subprocess(*ARGS, *only, f"--strands-chaos-report={report}", "-q")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    items = json.loads(report.read_text())["items"]
    # the golden order never shows it: its items (the golden policy's exactly, the first test) all pass here
    in_golden_order = [i for i in items if "/order[" not in i["nodeid"]]
    assert len(in_golden_order) == len(TODAYS_IDS) and all(i["outcome"] == "passed" for i in in_golden_order)
    failing = [i for i in items if i["outcome"] == "failed"]
    assert failing and all(i["nodeid"].endswith("/order[1,0]") for i in failing)
    assert not any("::golden/" in i["nodeid"] for i in failing)  # the order was reached: its points found the bug
    rules = {p.split("] ")[0].rsplit("[", 1)[-1] for i in failing for p in i["problems"]}
    assert rules and "not-fired" not in rules and rules & {"history", "workspace", "tool-rerun"}, rules
    assert summary(result)["divergences"] == len(failing)
    item = failing[0]
    argv = shlex.split(item["reproduce"])
    again = subprocess.run(
        [sys.executable, "-m", "pytest", *argv[1:]], cwd=pytester.path, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == pytest.ExitCode.TESTS_FAILED, again.stdout[-2000:]
    assert all(problem.split(":")[0] in again.stdout for problem in item["problems"])


def test_an_order_its_golden_run_never_reached_fails_not_fired(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agents=FACTORIES
        + """

from strands.tools.executors import SequentialToolExecutor

RUNS = []


def build_agent_turns_sequential(ctx):  # concurrent in the golden run, one at a time afterwards
    agent = ledger_agent(ctx)
    RUNS.append(ctx.phase)
    if RUNS.count("golden") > 1:
        agent.tool_executor = SequentialToolExecutor()
    return agent
"""
    )
    result = pytester.runpytest_inprocess(*ARGS, "-k", "turns_sequential and golden", "-q")
    out = result.stdout.str()
    assert "[not-fired] the order batch[0]/order[1,0] was never reached" in out
    result.assert_outcomes(passed=1, failed=1)
