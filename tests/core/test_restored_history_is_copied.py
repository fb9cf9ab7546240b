"""Each unit's Agent gets its own copy of the restored conversation (agent/durable.py, `_build_agent`): whatever the
agent, a hook or a conversation manager does to its messages or state in place cannot reach the session's state. Each
restored message carries the tracking id its position names (the journal keeps none)."""

from __future__ import annotations

import copy
import uuid
from pathlib import Path
from typing import Any

from strands_durable import CrashPoints, LocalStore, run_workflow
from strands_durable.agent.durable import DurableInvoker
from strands_durable.faults.kit.oracle import RequestLog
from tests.core.support import ExecutionLog, analyst_follow_up, counted_options

SPEC = Path(__file__).parent / "specs" / "chain-tools.strands.yaml"


def containers(value: Any) -> list[Any]:
    """Every dict and list inside `value`, `value` included."""
    found: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            stack.extend(item)
    return found


def vandalise(value: Any) -> None:
    """Change every dict and list inside `value` in place."""
    for item in containers(value):
        if isinstance(item, dict):
            for key in list(item):
                if isinstance(item[key], str):
                    item[key] += " (changed)"
            item["added"] = True
        else:
            item.append("added")


def test_an_agents_changes_to_its_restored_messages_and_state_never_reach_the_session(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "sessions")
    options = counted_options(ExecutionLog(tmp_path / "exec.log"), RequestLog(), out_dir=tmp_path / "out")
    session_id = run_workflow(SPEC, options, store=store).session_id
    session = store.open(session_id)
    conv = next(conv for conv in session.state.conversations.values() if conv.agent == "analyst")
    conv.agent_state["notes"] = {"seen": ["fsync"]}  # a state to restore, as a tool writing agent.state leaves
    assert any("toolUse" in block for message in conv.messages for block in message["content"])
    messages_before, state_before = copy.deepcopy(conv.messages), copy.deepcopy(conv.agent_state)
    invocation = analyst_follow_up(conv.key)
    agent, _ = DurableInvoker(session, CrashPoints())._build_agent(invocation, conv, started=False)
    restored = [{k: v for k, v in message.items() if k != "tracking_id"} for message in agent.messages]
    assert restored == conv.messages[-len(agent.messages) :] and agent.state.get() == conv.agent_state
    # each restored message is named by its place in the conversation, so the SDK draws no random id for it
    first = len(conv.messages) - len(agent.messages)
    ids = [m["tracking_id"] for m in agent.messages]
    assert [uuid.UUID(i).int & 0xFFFFFFFFFFFF for i in ids] == list(range(first, len(conv.messages)))
    assert len({i[:-12] for i in ids}) == 1 and all(str(uuid.UUID(i)) == i for i in ids)  # the SDK's UUID form
    again, _ = DurableInvoker(session, CrashPoints())._build_agent(invocation, conv, started=False)
    assert [m["tracking_id"] for m in again.messages] == ids  # the same message, the same id in every unit
    stored = {id(item) for item in containers(conv.messages) + containers(conv.agent_state)}
    assert not [item for item in containers(agent.messages) if id(item) in stored]
    vandalise(agent.messages)
    vandalise(agent.state._data)  # where the SDK's AgentState keeps its values
    session.close()
    assert conv.messages == messages_before and conv.agent_state == state_before
    assert store.load(session_id).conversations[conv.key].messages == messages_before
