"""A Swarm node's human-in-the-loop interrupt (the SDK's interrupts) across a process restart: the first process
stops for the human, a fresh one (a forked child in between holds nothing) answers and the swarm finishes as it
would in one process, without running an approved tool twice or asking a stored model turn again."""

from __future__ import annotations

import json
from typing import Any

from strands import Agent
from strands.hooks import BeforeToolCallEvent

from strands_durable import LocalStore
from strands_durable.faults.kit.forking import fork_child, wait_child
from strands_durable.history import normalize, validate
from strands_durable.sdk import DurableSessionManager

from .support import World

SCRIPTS: dict[str, list[Any]] = {
    "recorder": [
        [{"name": "add_expense", "input": {"item": "taxi", "amount": 12}}],
        [{"name": "handoff_to_agent", "input": {"agent_name": "reviewer", "message": "Check it."}}],
        "Recorded the taxi.",
    ],
    "reviewer": ["Reviewed: fine."],
}
TASK = "Record the taxi."


def approval(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "add_expense" and event.interrupt("approve", reason="record it?") != "yes":
        event.cancel_tool = "not approved"


def build_swarm(world: World) -> Any:
    from strands.multiagent import Swarm

    agents = []
    for name, script in SCRIPTS.items():
        agent = Agent(name=name, model=world.model(script), tools=world.tools(), callback_handler=None)
        agent.hooks.add_callback(BeforeToolCallEvent, approval)
        agents.append(agent)
    return Swarm(agents, session_manager=DurableSessionManager("team-1", world.sessions))


def outcome(swarm: Any, result: Any) -> dict[str, Any]:
    return {
        "status": str(result.status),
        "order": [node.node_id for node in result.node_history],
        "results": {node_id: str(node.result) for node_id, node in sorted(result.results.items())},
        "conversations": {n: normalize(node.executor.messages) for n, node in sorted(swarm.nodes.items())},
    }


def answer(interrupts: list[Any]) -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": i.id, "response": "yes"}} for i in interrupts]


def test_a_swarm_nodes_interrupt_is_answered_after_a_process_restart(tmp_path):
    golden_world = World(tmp_path / "golden")
    swarm = build_swarm(golden_world)
    first = swarm(TASK)
    assert str(first.status) == "Status.INTERRUPTED" and first.interrupts
    golden = outcome(swarm, swarm(answer(first.interrupts)))
    assert golden["order"] == ["recorder", "reviewer"] and golden["status"] == "Status.COMPLETED"

    world = World(tmp_path / "sessions")
    asked = tmp_path / "interrupts.json"

    def stop_for_the_human() -> int:
        result = build_swarm(world)(TASK)
        asked.write_text(json.dumps([{"id": i.id, "name": i.name} for i in result.interrupts]))
        return 0 if str(result.status) == "Status.INTERRUPTED" else 1

    assert wait_child(fork_child(stop_for_the_human)).code == 0
    state = LocalStore(world.sessions).load("team-1")
    assert state.status == "paused" and state.reason == "hitl"
    assert world.effects == []  # read back through the child's tools: nothing ran before the approval
    requests_before = len(world.requests)

    class Asked:
        def __init__(self, raw: dict[str, Any]) -> None:
            self.id = raw["id"]

    swarm = build_swarm(world)
    resumed = swarm(answer([Asked(raw) for raw in json.loads(asked.read_text())]))
    assert outcome(swarm, resumed) == golden
    assert [e["item"] for e in world.effects] == ["taxi"]
    # the child's requests were recorded in its own memory; this process asked only for what was not stored
    assert len(world.requests) == requests_before + 3  # recorder: handoff turn and final answer; reviewer: one
    state = LocalStore(world.sessions).load("team-1")
    assert state.status == "idle"
    for conv in state.conversations.values():
        assert validate(conv.messages, provider="bedrock", mode="stored") == []
