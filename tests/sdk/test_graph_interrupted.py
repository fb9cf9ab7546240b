"""Ctrl+C inside a Graph's or Swarm's node (a KeyboardInterrupt raised in a node's tool, in-process) leaves the
multi-agent invocation pending exactly as a crash does (docs/python-agents.md, "Graphs and Swarms"): calling the
same orchestrator object again, or a new one on the session, continues at the interrupted node (its committed
turns restored, its committed tool results replayed), never re-runs a completed node, and ends as an
uninterrupted run does. The SDK's Graph ends such a call one of two ways, depending on where the interrupt meets
its event loop: left `EXECUTING`, or (Python 3.11's `asyncio.wait_for` losing the cancellation that tears the
loop down) reported `COMPLETED` after running the next nodes without the interrupted one; the manager never
stores a completed end for it. The way is forced here by the tool: an async tool raising at once is met while a
node event waits in the Graph's queue (reported completed); one that yields first is not (left executing)."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from strands import Agent, tool
from strands.multiagent import GraphBuilder, Swarm

from strands_durable import LocalStore
from strands_durable.history import normalize
from strands_durable.sdk import DurableSessionManager

from .support import World

TASK = "Record my expenses."
GRAPH = {
    "plan": ["Plan: the taxi, then the hotel."],
    "record": [
        [{"name": "add_expense", "input": {"item": "taxi", "amount": 12}}],
        [{"name": "add_expense", "input": {"item": "hotel", "amount": 140}}],
        "Recorded both.",
    ],
    "summary": ["Summary: 152."],
}
SWARM = {
    "booker": [
        [{"name": "add_expense", "input": {"item": "taxi", "amount": 12}}],
        [{"name": "handoff_to_agent", "input": {"agent_name": "reviewer", "message": "Check it."}}],
        "Booked.",
    ],
    "reviewer": [
        [{"name": "add_expense", "input": {"item": "dinner", "amount": 35}}],
        [{"name": "add_expense", "input": {"item": "hotel", "amount": 140}}],
        "Reviewed: fine.",
    ],
}
# how the interrupting tool meets the SDK: "at once" (the Graph reports completed), "after a yield" (the Graph is
# left executing), "in a thread" (a plain tool, run by the SDK in a worker thread: either, by timing)
WAYS = ["at once", "after a yield", "in a thread"]


class Ctrl:
    """Where the next Ctrl+C goes: the tool call recording `item` raises KeyboardInterrupt (once)."""

    def __init__(self, item: str | None) -> None:
        self.item = item

    def hit(self, item: str) -> None:
        if item == self.item:
            self.item = None
            raise KeyboardInterrupt("Ctrl+C")


def expense_tool(world: World, ctrl: Ctrl, way: str) -> Any:
    def record(item: str, amount: float) -> str:
        with world.lock:
            world.effects.append({"item": item})
        return f"recorded {item}: {amount}"

    if way == "in a thread":

        @tool
        def add_expense(item: str, amount: float) -> str:
            """Record one expense."""
            ctrl.hit(item)
            return record(item, amount)

        return add_expense

    @tool(name="add_expense")
    async def add_expense_async(item: str, amount: float) -> str:
        """Record one expense."""
        if way == "after a yield":
            await asyncio.sleep(0)
        ctrl.hit(item)
        return record(item, amount)

    return add_expense_async


def build_graph(world: World, ctrl: Ctrl | None = None, way: str = "at once") -> Any:
    tools = [expense_tool(world, ctrl or Ctrl(None), way)]
    builder = GraphBuilder()
    for node_id, script in GRAPH.items():
        agent = Agent(model=world.model(script), tools=tools if node_id == "record" else [], callback_handler=None)
        builder.add_node(agent, node_id)
    builder.add_edge("plan", "record")
    builder.add_edge("record", "summary")
    builder.set_entry_point("plan")
    builder.set_max_node_executions(10)
    builder.set_session_manager(DurableSessionManager("graph-1", world.sessions))
    return builder.build()


def build_swarm(world: World, ctrl: Ctrl | None = None, way: str = "at once") -> Any:
    tools = [expense_tool(world, ctrl or Ctrl(None), way)]
    agents = [
        Agent(name=name, model=world.model(script), tools=tools, callback_handler=None)
        for name, script in SWARM.items()
    ]
    return Swarm(agents, session_manager=DurableSessionManager("team-1", world.sessions))


def outcome(orchestrator: Any, result: Any) -> dict[str, Any]:
    order = getattr(result, "execution_order", None) or getattr(result, "node_history", [])
    return {
        "status": str(result.status),
        "order": [node.node_id for node in order],
        "results": {node_id: str(node.result) for node_id, node in sorted(result.results.items())},
        "conversations": {n: normalize(node.executor.messages) for n, node in sorted(orchestrator.nodes.items())},
    }


def golden(tmp_path: Any, build: Any) -> tuple[dict[str, Any], World]:
    world = World(tmp_path / "golden")
    orchestrator = build(world)
    return outcome(orchestrator, orchestrator(TASK)), world


def interrupted(world: World, build: Any, way: str) -> Any:
    """The orchestrator after its call raised KeyboardInterrupt in the hotel's tool call."""
    orchestrator = build(world, Ctrl("hotel"), way)
    with pytest.raises(KeyboardInterrupt):
        orchestrator(TASK)
    return orchestrator


def assert_nothing_done_twice(world: World, gold_world: World) -> None:
    effects = Counter(effect["item"] for effect in world.effects)
    assert effects == Counter(effect["item"] for effect in gold_world.effects), "a committed tool ran again"
    asked = [repr(request) for request in world.requests]
    assert len(asked) == len(set(asked)), "a stored model turn was asked again"
    assert len(asked) == len(gold_world.requests), "the model was asked more (or less) than in one run"


@pytest.mark.parametrize("way", WAYS)
def test_the_same_graph_called_again_after_ctrl_c_in_a_nodes_tool_continues_at_that_node(tmp_path, way):
    expected, gold_world = golden(tmp_path, build_graph)
    world = World(tmp_path / "sessions")
    graph = interrupted(world, build_graph, way)
    assert LocalStore(world.sessions).load("graph-1").status == "running", "the interrupted invocation ended"

    result = graph(TASK)  # the same Graph object: the plan node is not run again, record finishes, then summary

    assert outcome(graph, result) == expected
    assert_nothing_done_twice(world, gold_world)
    assert LocalStore(world.sessions).load("graph-1").status == "idle"


def test_a_new_graph_after_the_sdk_reported_the_interrupted_call_completed_continues_at_that_node(tmp_path):
    expected, gold_world = golden(tmp_path, build_graph)
    world = World(tmp_path / "sessions")
    interrupted(world, build_graph, "at once")

    again = build_graph(world)
    result = again(TASK)

    assert outcome(again, result) == expected
    assert_nothing_done_twice(world, gold_world)


def test_a_graph_call_that_raised_stores_no_completed_end_even_when_the_sdk_reports_completed(tmp_path):
    world = World(tmp_path / "sessions")
    graph = interrupted(world, build_graph, "at once")
    assert str(graph.state.status) == "Status.COMPLETED", "the SDK path this test forces was not taken"

    state = LocalStore(world.sessions).load("graph-1")
    assert state.status == "running", "the session was marked idle with record's invocation pending"
    assert not state.pattern_state["multiagent.invocation"].get("ended"), "a completed end was stored"
    assert "node.summary" not in state.conversations, "summary ran without record's result"
    assert [effect["item"] for effect in world.effects] == ["taxi"]
    assert len(world.requests) == 3  # plan's answer, record's two tool turns: summary was never asked


@pytest.mark.parametrize("way", ["at once", "in a thread"])
def test_the_same_swarm_called_again_after_ctrl_c_in_a_nodes_tool_continues_at_that_node(tmp_path, way):
    expected, gold_world = golden(tmp_path, build_swarm)
    world = World(tmp_path / "sessions")
    swarm = interrupted(world, build_swarm, way)
    assert LocalStore(world.sessions).load("team-1").status == "running"

    result = swarm(TASK)  # the same Swarm object: booker is not run again, reviewer finishes

    assert outcome(swarm, result) == expected
    assert_nothing_done_twice(world, gold_world)
    assert LocalStore(world.sessions).load("team-1").status == "idle"
