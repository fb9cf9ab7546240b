"""What the model or the user hands the agent beyond a prompt: a call of a tool nobody registered, and messages
given to the `Agent` constructor for a new session."""

from __future__ import annotations

from typing import Any

import pytest
from strands import Agent

from strands_durable import CrashPoints, LocalStore
from strands_durable.errors import UsageError
from strands_durable.history import normalize, validate
from strands_durable.sdk import DurableSessionManager

from .support import PROMPTS, SCRIPT, World, crash_run, raise_at

UNKNOWN_BATCH: list[Any] = [
    [{"name": "no_such_tool", "input": {"x": 1}}, {"name": "add_expense", "input": {"item": "taxi", "amount": 12}}],
    "Recorded the taxi; the other tool does not exist.",
]
INITIAL = [
    {"role": "user", "content": [{"text": "Hi, I am Ann."}]},
    {"role": "assistant", "content": [{"text": "Hello Ann."}]},
]


def stored(world: World) -> Any:
    return LocalStore(world.sessions).load("expenses-1").conversations["default"]


def test_a_call_of_an_unregistered_tool_stores_the_sdks_error_result_and_the_conversation_continues(tmp_path):
    world = World(tmp_path / "sessions")
    agent = world.agent(script=UNKNOWN_BATCH)
    result = agent(PROMPTS[0])
    assert str(result).strip() == UNKNOWN_BATCH[1]
    results = {b["toolResult"]["toolUseId"]: b["toolResult"] for b in stored(world).messages[2]["content"]}
    assert results["tooluse_s0_0"]["status"] == "error"
    assert results["tooluse_s0_0"]["content"] == [{"text": "Unknown tool: no_such_tool"}]
    assert normalize(world.agent().messages) == normalize(agent.messages)
    assert validate(stored(world).messages, provider="bedrock", mode="stored") == []


@pytest.mark.parametrize("style", ["agent()", "re-send"])
def test_a_crash_after_a_batch_with_an_unregistered_tool_does_not_run_its_stored_tools_again(tmp_path, style):
    golden = World(tmp_path / "golden").agent(script=UNKNOWN_BATCH)
    golden(PROMPTS[0])
    world = World(tmp_path / "sessions")
    crash_run(world.agent(script=UNKNOWN_BATCH, crash_at="default/inv[0]/turn[1]/model.before"), PROMPTS[0])
    assert len(world.effects) == 1
    resumed = world.agent(script=UNKNOWN_BATCH)
    resumed() if style == "agent()" else resumed(PROMPTS[0])
    assert len(world.effects) == 1, "a tool whose result was stored ran again"
    assert normalize(resumed.messages) == normalize(golden.messages)


def _agent_with_messages(world: World, crash: CrashPoints | None = None) -> Any:
    return Agent(
        model=world.model(["(the constructor's answer)", *SCRIPT]),  # the script is indexed by assistant turns
        tools=world.tools(),
        callback_handler=None,
        messages=[dict(m) for m in INITIAL],
        session_manager=DurableSessionManager("expenses-1", world.sessions, crash_points=crash or CrashPoints()),
    )


def test_messages_given_to_the_constructor_are_stored_as_history_before_the_first_prompt(tmp_path):
    world = World(tmp_path / "sessions")
    agent = _agent_with_messages(world)
    agent(PROMPTS[0])
    conv = stored(world)
    assert conv.messages[:2] == INITIAL
    assert conv.units[:2] == ["", ""], "the constructor's messages belong to no invocation"
    assert normalize(conv.messages) == normalize(agent.messages)
    assert normalize(_agent_with_messages(world).messages) == normalize(agent.messages)  # restored, not doubled


@pytest.mark.parametrize("style", ["agent()", "re-send"])
def test_a_crash_in_the_first_invocation_after_constructor_messages_resumes_that_invocation(tmp_path, style):
    golden = _agent_with_messages(World(tmp_path / "golden"))
    golden(PROMPTS[0])
    world = World(tmp_path / "sessions")
    crash = CrashPoints()
    crash.subscribe(raise_at("default/inv[0]/turn[1]/model.before"))
    crash_run(_agent_with_messages(world, crash), PROMPTS[0])
    effects = len(world.effects)
    resumed = _agent_with_messages(world)
    assert resumed._session_manager.pending_prompt() == [{"text": PROMPTS[0]}]
    assert resumed.messages == INITIAL
    resumed() if style == "agent()" else resumed(PROMPTS[0])
    assert len(world.effects) == effects
    assert normalize(resumed.messages) == normalize(golden.messages)


def test_constructor_messages_that_are_not_a_valid_history_are_refused_naming_the_rule(tmp_path):
    world = World(tmp_path / "sessions")
    broken = [{"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "add_expense", "input": {}}}]}]
    agent = Agent(
        model=world.model(),
        tools=world.tools(),
        callback_handler=None,
        messages=[*broken, {"role": "user", "content": [{"text": "and?"}]}],
        session_manager=DurableSessionManager("expenses-1", world.sessions),
    )
    with pytest.raises(Exception) as raised:
        agent(PROMPTS[0])
    error = raised.value
    while not isinstance(error, UsageError) and error is not None:
        error = getattr(error, "original_exception", None) or error.__cause__
    assert isinstance(error, UsageError) and "Agent(messages=...)" in str(error)
    assert world.effects == [] and world.requests == []
