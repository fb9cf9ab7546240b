"""DurableSessionManager with structured output (`structured_output_model=`): the answer's tool call and result
are stored like any turn, restored by a fresh agent, and a crash after the call was committed resumes to the same
structured answer without asking the model again (the SDK reads a structured answer only from its tool running
in the invocation, so that pure tool runs again)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from strands_durable.history import normalize, validate

from .support import World, crash_run


class Expense(BaseModel):
    item: str
    amount: float


SCRIPT = [[{"name": "Expense", "input": {"item": "taxi", "amount": 12}}]]
PROMPT = "Record the taxi as an expense."


@pytest.fixture
def world(tmp_path) -> World:
    return World(tmp_path / "sessions")


def test_the_structured_answer_is_stored_and_restored(world):
    agent = world.agent(script=SCRIPT)
    result = agent(PROMPT, structured_output_model=Expense)
    assert result.structured_output == Expense(item="taxi", amount=12)
    again = world.agent(script=SCRIPT)
    assert normalize(again.messages) == normalize(agent.messages)
    assert [m["role"] for m in again.messages] == ["user", "assistant", "user"]
    assert not validate(again.messages, provider="bedrock", mode="stored")


@pytest.mark.parametrize(
    "point",
    ["default/inv[0]/turn[0]/answer/store.after_commit", "default/inv[0]/turn[0]/results/store.after_commit"],
)
def test_a_crash_after_the_structured_call_was_stored_resumes_without_asking_again(world, tmp_path, point):
    clean = World(tmp_path / "golden")
    expected = clean.agent(script=SCRIPT)(PROMPT, structured_output_model=Expense)

    crashing = world.agent(script=SCRIPT, crash_at=point)
    crash_run(crashing, PROMPT, structured_output_model=Expense)
    asked = len(world.requests)
    resumed = world.agent(script=SCRIPT)
    result = resumed(PROMPT, structured_output_model=Expense)
    assert result.structured_output == expected.structured_output
    assert len(world.requests) == asked, "the committed structured answer was asked of the model again"
    assert normalize(resumed.messages) == normalize(clean.agent(script=SCRIPT).messages)
