"""Idempotent re-calls after a stored end (docs/python-agents.md, "Idempotency tokens"): a crash after an
invocation's end was stored but before the caller got its result. Calling again with the invocation's token
(`invocation_state["idempotency_token"]`) returns the stored result and runs nothing; with the token of a pending
invocation it finishes it. A Graph or Swarm called again with the same task returns the stored result without a
token; `durable_new_run` runs it again. A chat Agent re-sent its prompt without a token starts a new turn."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import pytest
from strands import Agent
from strands.hooks import AfterMultiAgentInvocationEvent, HookProvider

from strands_durable import CrashPoints, LocalStore
from strands_durable.errors import UsageError
from strands_durable.faults.kit.forking import fork_child, wait_child
from strands_durable.history import normalize
from strands_durable.sdk import DurableSessionManager

from .support import PROMPTS, SCRIPT, World, sigkill_at

MORE = [*SCRIPT, "A new turn."]  # a fifth answer, for a prompt that is run again


@pytest.fixture
def world(tmp_path) -> World:
    return World(tmp_path / "sessions")


def _golden(tmp_path: Any) -> tuple[Any, list[Any]]:
    agent = World(tmp_path / "golden").agent()
    results = [agent(prompt) for prompt in PROMPTS]
    return agent, results


def _killed(body: Any) -> None:
    assert wait_child(fork_child(body)).signal == signal.SIGKILL


def _first_then_killed(world: World, kill_at: str, second: dict[str, Any]) -> None:
    """A child runs the first prompt (token t0) and the second one (`second`), killed at `kill_at`."""

    def run() -> int:
        world.agent()(PROMPTS[0], invocation_state={"idempotency_token": "t0"})
        world.agent(kill_at=kill_at)(PROMPTS[1], invocation_state=second)
        return 0

    _killed(run)


def _call(agent: Any, how: str, prompt: Any, state: dict[str, Any]) -> Any:
    if how == "__call__":
        return agent(prompt, invocation_state=state)
    if how == "invoke_async":
        return asyncio.run(agent.invoke_async(prompt, invocation_state=state))

    async def streamed() -> Any:
        result = None
        async for event in agent.stream_async(prompt, invocation_state=state):
            result = event.get("result", result)
        return result

    return asyncio.run(streamed())


@pytest.mark.parametrize("how", ["__call__", "invoke_async", "stream_async"])
def test_the_token_of_a_finished_invocation_returns_its_stored_result_and_runs_nothing(world, tmp_path, how):
    golden, results = _golden(tmp_path)
    _first_then_killed(world, "default/inv[1]/unit.after", {"idempotency_token": "t1"})  # its end is stored
    stored = LocalStore(world.sessions).load("expenses-1")
    assert stored.status == "idle", "the kill came after the end was stored"
    agent = world.agent()
    assert agent._session_manager.pending_prompt() is None  # nothing tells the caller the work had finished
    result = _call(agent, how, PROMPTS[1], {"idempotency_token": "t1"})
    assert world.requests == [] and world.effects == [], "the model or a tool ran again"
    assert str(result) == str(results[1]) and result.stop_reason == results[1].stop_reason
    assert result.metrics.agent_invocations[-1].usage == results[1].metrics.agent_invocations[-1].usage
    assert normalize(agent.messages) == normalize(golden.messages), "the re-sent prompt was kept in memory"
    assert LocalStore(world.sessions).load("expenses-1").conversations["default"].messages == (
        stored.conversations["default"].messages
    )
    assert agent._session_manager.session_usage().committed == golden._session_manager.session_usage().committed


def test_the_token_of_an_earlier_invocation_returns_that_invocations_result(world, tmp_path):
    golden, results = _golden(tmp_path)
    agent = world.agent()
    for i, prompt in enumerate(PROMPTS):
        agent(prompt, invocation_state={"idempotency_token": f"t{i}"})
    again = world.agent()
    result = again(PROMPTS[0], invocation_state={"idempotency_token": "t0"})
    assert str(result) == str(results[0])
    assert normalize(again.messages) == normalize(golden.messages)
    assert len(world.requests) == 4  # the four answers of the two prompts, none for the re-call
    again.state.set("note", "kept")  # not committed yet: a re-call that returns a stored result keeps it
    again(PROMPTS[1], invocation_state={"idempotency_token": "t1"})
    assert again.state.get("note") == "kept"


def test_a_returned_stored_result_reports_its_usage_but_spends_none(world, tmp_path):
    agent = world.agent()
    first = agent(PROMPTS[0], invocation_state={"idempotency_token": "t0"})
    usage = dict(first.metrics.agent_invocations[-1].usage)  # the metrics object is the agent's: copied
    spent = dict(first.metrics.accumulated_usage)
    assert usage == spent and spent["totalTokens"] > 0
    again = agent(PROMPTS[0], invocation_state={"idempotency_token": "t0"})  # the caller never got its answer
    assert again.metrics.agent_invocations[-1].usage == usage
    assert again.metrics.accumulated_usage == spent, "a stored result's tokens were counted as spent again"
    fresh = world.agent()  # another process asking the same
    result = fresh(PROMPTS[0], invocation_state={"idempotency_token": "t0"})
    assert result.metrics.agent_invocations[-1].usage == usage
    assert result.metrics.accumulated_usage["totalTokens"] == 0
    assert len(world.requests) == 2  # the first call's two answers only


def test_the_token_of_a_pending_invocation_finishes_it_whatever_the_prompt(world, tmp_path):
    golden, results = _golden(tmp_path)
    _first_then_killed(world, "default/inv[1]/turn[0]/tool[0]:add_expense/tool.committed", {"idempotency_token": "t1"})
    agent = world.agent()
    assert agent._session_manager.pending_prompt() == [{"text": PROMPTS[1]}]
    result = agent("Did my dinner go through?", invocation_state={"idempotency_token": "t1"})
    assert str(result) == str(results[1])
    assert normalize(agent.messages) == normalize(golden.messages)
    assert world.effects == [], "the stored tool result ran again"
    # and once finished, the same token returns that result again
    assert str(world.agent()(PROMPTS[1], invocation_state={"idempotency_token": "t1"})) == str(results[1])
    assert len(world.requests) == 1  # only the turn that was never answered


def test_without_a_token_a_resent_prompt_after_a_stored_end_is_a_new_turn(world, tmp_path):
    _first_then_killed(world, "default/inv[1]/unit.after", {})
    agent = world.agent(script=MORE)
    result = agent(PROMPTS[1])  # the window a token closes: the chat cannot tell a re-send from a new message
    assert str(result).strip() == "A new turn."
    assert len(world.requests) == 1
    assert [m["role"] for m in agent.messages] == ["user", "assistant"] * 5


def test_a_token_that_is_not_a_string_is_refused(world):
    with pytest.raises(UsageError, match=r'invocation_state\["idempotency_token"\] must be a non-empty string'):
        world.agent()(PROMPTS[0], invocation_state={"idempotency_token": 7})
    assert world.requests == []


# -- Graph and Swarm ---------------------------------------------------------------------------------------------

PLAN = ["Plan: record the taxi.", "Plan again."]
RECORD = [[{"name": "add_expense", "input": {"item": "taxi", "amount": 12}}], "Recorded the taxi.", "Again."]
TASK = "Record my expenses."


def build_graph(world: World, crash: CrashPoints | None = None) -> Any:
    from strands.multiagent import GraphBuilder

    builder = GraphBuilder()
    builder.add_node(Agent(model=world.model(PLAN), callback_handler=None), "plan")
    builder.add_node(Agent(model=world.model(RECORD), tools=world.tools(), callback_handler=None), "record")
    builder.add_edge("plan", "record")
    builder.set_entry_point("plan")
    builder.set_max_node_executions(10)
    builder.set_session_manager(DurableSessionManager("graph-1", world.sessions, crash_points=crash))
    return builder.build()


SWARM = {
    "booker": [
        [{"name": "add_expense", "input": {"item": "taxi", "amount": 12}}],
        [{"name": "handoff_to_agent", "input": {"agent_name": "reviewer", "message": "Check it."}}],
        "Booked.",
    ],
    "reviewer": ["Reviewed: fine.", "Reviewed again."],
}


class KillAfterTheSwarm(HookProvider):
    """The user's hook on the swarm's end. The SDK registers a Swarm's `hooks=` before its session manager, and
    After* hooks run in reverse: this runs after the manager stored the end (the window the docs name)."""

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        registry.add_callback(AfterMultiAgentInvocationEvent, lambda event: os.kill(os.getpid(), signal.SIGKILL))


def build_swarm(world: World, *, hooks: list[Any] | None = None) -> Any:
    from strands.multiagent import Swarm

    nodes = [
        Agent(name=name, model=world.model(script), tools=world.tools(), callback_handler=None)
        for name, script in SWARM.items()
    ]
    return Swarm(nodes, hooks=hooks, session_manager=DurableSessionManager("team-1", world.sessions))


def outcome(result: Any) -> dict[str, Any]:
    order = getattr(result, "execution_order", None) or getattr(result, "node_history", [])
    return {
        "status": str(result.status),
        "order": [node.node_id for node in order],
        "results": {node_id: str(node.result) for node_id, node in sorted(result.results.items())},
    }


@pytest.mark.parametrize("kind", ["graph", "swarm"])
@pytest.mark.parametrize("call", ["same task", "same token"])
def test_a_graph_or_swarm_called_again_after_its_stored_end_returns_the_stored_result(tmp_path, kind, call):
    build = build_graph if kind == "graph" else build_swarm
    golden = outcome(build(World(tmp_path / "golden"))(TASK))
    world = World(tmp_path / "sessions")
    state = {"idempotency_token": "run-1"} if call == "same token" else {}

    def run() -> int:
        if kind == "graph":
            build_graph(world, sigkill_bus("multiagent/end/store.after_commit"))(TASK, state)
        else:
            build_swarm(world, hooks=[KillAfterTheSwarm()])(TASK, state)
        return 0

    _killed(run)
    assert LocalStore(world.sessions).load("graph-1" if kind == "graph" else "team-1").status == "idle"
    again = build(world)
    task = TASK if call == "same task" else "Did it go through?"
    result = again(task, state)
    assert outcome(result) == golden
    assert world.requests == [] and world.effects == [], "the model or a tool ran again"
    forced = again(TASK, {"durable_new_run": True})  # a documented flag forces a new run
    assert str(forced.status) == "Status.COMPLETED" and world.requests, "durable_new_run did not run it again"


def test_a_graph_given_another_task_runs_it(world):
    build_graph(world)(TASK)
    requests = len(world.requests)
    build_graph(world)("Something else.")
    assert len(world.requests) == requests + 2  # both nodes answered the new task


def sigkill_bus(point_id: str) -> CrashPoints:
    bus = CrashPoints()
    bus.subscribe(sigkill_at(point_id))
    return bus


def test_the_token_of_an_earlier_graph_invocation_is_refused_its_result_is_no_longer_stored(world):
    build_graph(world)(TASK, {"idempotency_token": "first"})
    build_graph(world)("Something else.", {"idempotency_token": "second"})
    requests = len(world.requests)
    with pytest.raises(UsageError, match=r"token 'first' finished earlier, but only the last invocation's result"):
        build_graph(world)(TASK, {"idempotency_token": "first"})
    assert len(world.requests) == requests
    again = build_graph(world)("Something else.", {"idempotency_token": "second"})  # the last one's is stored
    assert str(again.status) == "Status.COMPLETED" and len(world.requests) == requests
