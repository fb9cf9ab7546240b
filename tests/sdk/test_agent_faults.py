"""A plain Agent crashed at SDK hooks and store commits by the engine behind `strands_chaos.run_agent`
(faults/agents/engine.py): SIGKILL of a forked child and in-process crashes, both resume styles; the same engine
finds the SDK's FileSessionManager failing where we do not; two processes on one session; power cuts."""

from __future__ import annotations

import functools
import os
import time

import pytest

from strands_durable.errors import ExitCode
from strands_durable.faults.agents import examples
from strands_durable.faults.agents.engine import explore
from strands_durable.faults.agents.power import explore_power
from strands_durable.faults.agents.run import AgentChaos
from strands_durable.faults.kit.forking import fork_child, wait_child

SAMPLED = 32  # a sample of the points (python -m strands_durable.faults.agents.managers explores them all)


def _expenses(manager: str, fault: str) -> AgentChaos:
    factory = functools.partial(examples.expenses_agent, manager=manager)
    return AgentChaos(factory, examples.PROMPTS, session_id=examples.SESSION_ID, faults=(fault,), max_points=SAMPLED)


@pytest.mark.parametrize("fault", ["kill", "interrupt"])
def test_a_plain_agent_survives_a_crash_at_sampled_hook_and_commit_points(tmp_path, fault):
    golden, outcomes = explore(_expenses("durable", fault), tmp_path)
    assert golden.concurrent, "the golden run's parallel tools did not overlap"
    assert not golden.problems, golden.problems
    assert len(outcomes) == SAMPLED and all(len(o.resumed) == 2 for o in outcomes)
    assert [o.describe() for o in outcomes if not o.ok] == []
    assert any(o.point.startswith("hook") for o in outcomes)
    assert any("store.before_commit" in o.point and not o.point.startswith("hook") for o in outcomes)


def test_the_same_harness_finds_the_file_session_managers_failures(tmp_path):
    _, outcomes = explore(_expenses("sdk-file", "kill"), tmp_path)
    resend = [f for o in outcomes for f in o.findings if f.variant == "re-send"]
    assert any(f.rule == "invalid-request" for f in resend), "re-sending after a crash mid-turn breaks alternation"
    assert not all(o.ok for o in outcomes)


def test_two_processes_invoking_one_session_exactly_one_proceeds(tmp_path):
    examples.warm_imports()
    world = examples.World(tmp_path / "one")
    world.root.mkdir()
    started = tmp_path / "started"

    def invoke() -> int:
        from strands import Agent, tool

        from strands_durable.sdk import DurableSessionManager

        @tool
        def slow(item: str) -> str:
            """Take a while."""
            started.touch()
            time.sleep(1.0)
            return "ok"

        agent = Agent(
            model=_script_model([[{"name": "slow", "input": {"item": "a"}}], "ok"]),
            tools=[slow],
            callback_handler=None,
            session_manager=DurableSessionManager("shared", world.sessions),
        )
        agent("go")
        return 0

    first = fork_child(invoke)
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    second = fork_child(invoke)
    outcomes = sorted([wait_child(first).code, wait_child(second).code])
    assert outcomes == [0, int(ExitCode.SESSION_UNUSABLE)]
    assert os.path.exists(world.sessions / "session_shared" / "journal.log")


def _script_model(script):
    from strands_durable.models.scripted import ScriptedModel

    return ScriptedModel(script)


def test_a_power_cut_before_any_fsync_loses_no_acknowledged_turn(tmp_path):
    report = explore_power(tmp_path / "power")
    assert report.states > 50 and report.resumed > 0
    assert report.problems == []
