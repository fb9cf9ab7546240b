"""A unit whose invocation was longer than the sliding window (40 messages): the SDK's trim, with no user message
left to cut at, cuts at a toolUse/toolResult pair and leaves a window that starts with an assistant turn, which
Bedrock and Anthropic refuse (V1). The next unit on that conversation starts its window at a prompt instead."""

from __future__ import annotations

from typing import Any

from strands_durable import CrashPoints, MemoryStore
from strands_durable.agent.durable import DurableInvoker
from strands_durable.history import validate
from strands_durable.history.window import misplaced_start
from strands_durable.store import events
from tests.core.support import analyst_follow_up

ROUNDS = 20  # a prompt, 20 tool rounds and an answer: 42 messages, more than the window's 40


def _long_invocation() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "Add them all up."}]}]
    for n in range(ROUNDS):
        use = {"toolUseId": f"t{n}", "name": "calculator", "input": {"expression": f"{n}+1"}}
        messages.append({"role": "assistant", "content": [{"toolUse": use}]})
        result = {"toolUseId": f"t{n}", "status": "success", "content": [{"text": str(n + 1)}]}
        messages.append({"role": "user", "content": [{"toolResult": result}]})
    messages.append({"role": "assistant", "content": [{"text": "210."}]})
    return messages


def test_the_next_unit_after_a_unit_longer_than_the_window_starts_at_a_prompt() -> None:
    store = MemoryStore()
    session = store.create({"session_id": "long-unit", "workflow_name": "w", "pattern": "chain"}, b"")
    messages = _long_invocation()
    session.commit([events.message("analyst", "analyst", i, m, unit="step[0]") for i, m in enumerate(messages)])
    conv = session.state.conversations["analyst"]
    invocation = analyst_follow_up("analyst", provider="bedrock")
    agent, _ = DurableInvoker(session, CrashPoints())._build_agent(invocation, conv, started=False)
    assert agent.messages == [] and agent.conversation_manager.removed_message_count == len(messages)
    prompt = {"role": "user", "content": [{"text": invocation.prompt}]}
    assert validate([*agent.messages, prompt], "bedrock", "request", tools_configured=True) == []


def test_a_window_is_moved_only_where_the_provider_refuses_its_start() -> None:
    window = _long_invocation()[3:]  # where the SDK's fallback cuts: an assistant's call and its result
    assert misplaced_start(window, "bedrock") == misplaced_start(window, "anthropic") == len(window)
    assert misplaced_start(window, "openai") == 0  # OpenAI accepts an assistant first
    followed = [*window, {"role": "user", "content": [{"text": "And now?"}]}]
    assert misplaced_start(followed, "all") == len(window)
    assert misplaced_start(_long_invocation(), "all") == 0 and misplaced_start([], "all") == 0
