"""A stored history valid by the stored-history rules but rejected by the agent's provider profile for its next
request: tool calls in the history while the agent now has no tools (Anthropic rejects tool blocks without a tool
config, rule V13; OpenAI accepts them). The manager fits the history to the profile before the request."""

from __future__ import annotations

import logging

from strands_durable import LocalStore
from strands_durable.history import validate

from .support import PROMPTS, SCRIPT, World

THANKS = "Thanks, that is all."
SCRIPT_AFTER = [*SCRIPT[:2], "You're welcome."]  # the scripted model answers by assistant turns so far


def _tool_blocks(messages):
    return [b for m in messages for b in m["content"] if "toolUse" in b or "toolResult" in b]


def test_tool_calls_in_the_history_of_an_agent_without_tools_are_fitted_to_the_anthropic_profile(tmp_path, caplog):
    world = World(tmp_path / "sessions")
    world.agent(provider_profile="anthropic")(PROMPTS[0])
    stored = LocalStore(world.sessions).load("expenses-1").conversations["default"]
    assert _tool_blocks(stored.messages) and validate(stored.messages, "anthropic", "stored") == []
    assert validate(stored.messages, "anthropic", "stored", tools_configured=False)[0].rule == "V13"

    without_tools = world.agent(provider_profile="anthropic", tools=[], script=SCRIPT_AFTER)
    with caplog.at_level(logging.WARNING, logger="strands_durable.sdk"):
        result = without_tools(THANKS)
    assert str(result).strip() == "You're welcome."
    request = world.requests[-1]
    assert _tool_blocks(request) == [], "the request still carries tool blocks without a tool config"
    assert validate(request, "anthropic", "request", tools_configured=False) == []
    assert "rendered as text" in caplog.text
    after = LocalStore(world.sessions).load("expenses-1").conversations["default"]
    assert after.generation == 1 and len(after.messages) == 6
    assert after.messages[1]["content"][0]["text"].startswith("[called the tool add_expense with")
    assert list((world.sessions / "session_expenses-1" / "backups").iterdir()), "the previous generation is kept"


def test_the_same_history_is_left_alone_for_a_profile_that_accepts_it(tmp_path):
    world = World(tmp_path / "sessions")
    world.agent(provider_profile="openai")(PROMPTS[0])
    without_tools = world.agent(provider_profile="openai", tools=[], script=SCRIPT_AFTER)
    without_tools(THANKS)
    after = LocalStore(world.sessions).load("expenses-1").conversations["default"]
    assert after.generation == 0
    assert _tool_blocks(world.requests[-1]), "OpenAI accepts tool blocks without tools: nothing to change"
