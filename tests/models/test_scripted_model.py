"""The scripted model plays exact turns picked from the conversation itself, so resume continues correctly."""

from __future__ import annotations

import copy
import json

import pytest
from strands import Agent, tool

from strands_durable.errors import ExitCode, WorkflowFailed
from strands_durable.models import ScriptedModel, ScriptError, ScriptExhausted
from tests.models.conftest import text_of, user

CALLS: list[str] = []


@tool
def send_invoice(customer: str, amount: int) -> str:
    """Send an invoice.

    Args:
        customer: Who pays.
        amount: How much, in cents.
    """
    CALLS.append(f"{customer}:{amount}")
    return f"invoice sent to {customer}"


SCRIPT = [
    [
        {"name": "send_invoice", "input": {"customer": "acme", "amount": 1200}, "toolUseId": "inv-1"},
        {"name": "send_invoice", "input": {"customer": "globex", "amount": 300}},
    ],
    {"text": "Both invoices are out.", "usage": {"inputTokens": 50, "outputTokens": 7}},
    "Nothing else to do.",
]


@pytest.fixture(autouse=True)
def _reset_calls():
    CALLS.clear()


def test_a_script_drives_a_real_agent_through_tool_calls_to_its_answer():
    agent = Agent(model=ScriptedModel(SCRIPT), tools=[send_invoice], callback_handler=None)
    result = agent("Bill our customers.")
    assert str(result).strip() == "Both invoices are out."
    assert CALLS == ["acme:1200", "globex:300"]
    uses = [b["toolUse"] for b in agent.messages[1]["content"]]
    assert [u["toolUseId"] for u in uses] == ["inv-1", "tooluse_s0_1"]
    assert result.metrics.accumulated_usage["outputTokens"] >= 7
    assert str(agent("Anything else?")).strip() == "Nothing else to do."


def test_a_fresh_instance_resumes_at_the_turn_after_the_partial_history():
    first = Agent(model=ScriptedModel(SCRIPT), tools=[send_invoice], callback_handler=None)
    first("Bill our customers.")
    partial = copy.deepcopy(first.messages[:3])  # prompt, toolUse turn, tool results: the answer is missing
    CALLS.clear()
    resumed = Agent(model=ScriptedModel(SCRIPT), tools=[send_invoice], messages=partial, callback_handler=None)
    result = resumed()
    assert str(result).strip() == "Both invoices are out."
    assert CALLS == []  # no tool re-run: the model went straight to turn 2
    assert [m["role"] for m in resumed.messages] == ["user", "assistant", "user", "assistant"]


def test_running_out_of_script_is_a_clear_workflow_failure():
    agent = Agent(model=ScriptedModel(["only answer"], name="writer"), callback_handler=None)
    agent("first")
    with pytest.raises(ScriptExhausted) as caught:
        agent("second")
    assert isinstance(caught.value, WorkflowFailed)
    assert caught.value.exit_code == ExitCode.RUNTIME
    assert str(caught.value) == "scripted model 'writer' has 1 turns; the conversation asks for turn 2"


def test_scripts_load_from_yaml_and_json_files_per_agent(tmp_path, collect):
    (tmp_path / "s.yaml").write_text("researcher:\n  - Found three sources.\nwriter:\n  - text: Draft one.\n")
    (tmp_path / "s.json").write_text(json.dumps(["Only one."]))
    researcher = ScriptedModel.from_file(tmp_path / "s.yaml", agent_id="researcher")
    assert text_of(collect(researcher, [user("go")])) == "Found three sources."
    writer = ScriptedModel.from_file(tmp_path / "s.yaml", agent_id="writer")
    assert text_of(collect(writer, [user("go")])) == "Draft one."
    assert text_of(collect(ScriptedModel.from_file(tmp_path / "s.json"), [user("go")])) == "Only one."
    with pytest.raises(ScriptError, match="no script for agent 'editor'"):
        ScriptedModel.from_file(tmp_path / "s.yaml", agent_id="editor")


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        ([42], "turn 0: expected text"),
        (["ok", {"tool_calls": [{"input": {}}]}], "turn 1, call 0: a tool call needs a 'name'"),
        ([[{"name": "t", "toolUseId": "bad id"}]], "toolUseId 'bad id' must match"),
        ([{"txt": "typo"}], "turn 0: unknown keys ['txt']"),
        ([{}], "turn 0: a turn needs text or tool calls"),
    ],
)
def test_malformed_turns_are_rejected_naming_the_turn(turns, message):
    with pytest.raises(ScriptError, match=message.replace("[", r"\[").replace("]", r"\]")):
        ScriptedModel(turns)


def test_the_same_script_answers_the_same_events_whatever_happened_before(collect):
    model = ScriptedModel(SCRIPT)
    history = [user("Bill our customers.")]
    first = collect(model, history)
    collect(model, [*history, {"role": "assistant", "content": [{"text": "x"}]}, user("y")])
    assert collect(model, history) == first
    assert collect(ScriptedModel(SCRIPT), history) == first
