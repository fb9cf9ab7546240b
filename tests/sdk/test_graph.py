"""DurableSessionManager on a strands Graph: node agents journaled; a node killed mid-conversation (SIGKILL of a
forked child) resumes without re-running the completed node, the committed tool or committed model turns."""

from __future__ import annotations

import os
import signal
from typing import Any

from strands import Agent
from strands.multiagent import GraphBuilder

from strands_durable import CrashPoints, LocalStore
from strands_durable.crashpoints import CrashPoint
from strands_durable.faults.agents import examples as agents
from strands_durable.faults.kit.forking import run_in_child
from strands_durable.history import normalize
from strands_durable.sdk import DurableSessionManager

PLANNER = ["Plan: record the taxi.", "Plan: nothing more."]
RECORDER = [
    [{"name": "add_expense", "input": {"item": "taxi", "amount": 12}}],
    "Recorded the taxi.",
    "Nothing more.",
]


def build(world: agents.World, phase: str, crash: CrashPoints | None = None) -> Any:
    builder = GraphBuilder()
    builder.add_node(Agent(model=agents.make_model(world, phase, PLANNER), callback_handler=None), "plan")
    record = Agent(
        model=agents.make_model(world, phase, RECORDER), tools=agents.make_tools(world, phase), callback_handler=None
    )
    builder.add_node(record, "record")
    builder.add_edge("plan", "record")
    builder.set_entry_point("plan")
    builder.set_max_node_executions(10)
    builder.set_session_manager(DurableSessionManager("graph-1", world.sessions, crash_points=crash))
    return builder.build()


def kill_at(point_id: str) -> CrashPoints:
    bus = CrashPoints()

    def kill(point: CrashPoint) -> None:
        if point.id == point_id:
            os.kill(os.getpid(), signal.SIGKILL)

    bus.subscribe(kill)
    return bus


def _world(path) -> agents.World:
    world = agents.World(path)
    world.root.mkdir(parents=True)
    return world


def test_a_node_killed_mid_conversation_resumes_without_redoing_completed_work(tmp_path):
    agents.warm_imports()
    golden_world = _world(tmp_path / "golden")
    golden = build(golden_world, "golden")
    expected = golden("Record my expenses.")

    world = _world(tmp_path / "crash")
    crashed = run_in_child(
        lambda: build(world, "crash", kill_at("node.record/inv[0]/turn[1]/model.before"))("Record my expenses.")
    )
    assert crashed.signal == signal.SIGKILL
    assert len(agents.read_lines(world.ledger)) == 1

    resumed = build(world, "resume")
    result = resumed("Record my expenses.")
    assert str(result.results["record"].result) == str(expected.results["record"].result)
    assert len(agents.read_lines(world.ledger)) == 1, "the tool whose result was committed ran again"
    asked = [r for r in agents.read_lines(world.requests) if r["phase"] == "resume"]
    assert len(asked) == 1, "only the record node's unanswered turn is asked again (the plan node is not re-run)"
    assert all(not r["invalid"] for r in agents.read_lines(world.requests))
    assert normalize(resumed.nodes["record"].executor.messages) == normalize(golden.nodes["record"].executor.messages)
    state = LocalStore(world.sessions).load("graph-1")
    assert set(state.conversations) == {"node.plan", "node.record"}
    assert state.status == "idle"


def test_node_conversations_continue_across_graph_invocations_as_in_one_process(tmp_path):
    golden_world = _world(tmp_path / "golden")
    golden = build(golden_world, "golden")
    golden("Record my expenses.")
    golden("Anything else?")

    world = _world(tmp_path / "durable")
    build(world, "first")("Record my expenses.")
    again = build(world, "second")  # a new process: the graph's ended state resets its nodes; the journal restores them
    again("Anything else?")
    for node_id in ("plan", "record"):
        assert normalize(again.nodes[node_id].executor.messages) == normalize(golden.nodes[node_id].executor.messages)
    assert len(agents.read_lines(world.ledger)) == 1
