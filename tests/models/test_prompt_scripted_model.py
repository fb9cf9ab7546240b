"""`strands_durable.testing.PromptScriptedModel`, the documented offline model: it scripts a real Agent whose
sliding window trims (ScriptedModel, keyed on the assistant turns the trimmed history shows, cannot), continues a
crashed invocation from fresh objects, and docs/python-agents.md's example runs as shown."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from strands import Agent, tool
from strands.agent.conversation_manager import SlidingWindowConversationManager

from strands_durable import CrashPoints, DurableSessionManager, InjectedCrash
from strands_durable.crashpoints import ToolCall
from strands_durable.models.scripted import ScriptedModel, ScriptExhausted
from strands_durable.testing import PromptScriptedModel
from tests.conftest import REPO

PROMPTS = ["Record the taxi.", "Record the hotel.", "Record the dinner.", "What did I spend?"]
SCRIPT: dict[str, list[Any]] = {
    "Record the taxi.": [[{"name": "add_expense", "input": {"item": "taxi", "amount": 12}}], "Taxi recorded."],
    "Record the hotel.": [[{"name": "add_expense", "input": {"item": "hotel", "amount": 140}}], "Hotel recorded."],
    "Record the dinner.": [[{"name": "add_expense", "input": {"item": "dinner", "amount": 35}}], "Dinner recorded."],
    "What did I spend?": ["187 in all."],
}
ANSWERS = ["Taxi recorded.", "Hotel recorded.", "Dinner recorded.", "187 in all."]


class Ledger:
    def __init__(self) -> None:
        self.items: list[str] = []

    def tool(self) -> Any:
        ledger = self

        @tool
        def add_expense(item: str, amount: float) -> str:
            """Record one expense."""
            ledger.items.append(item)
            return f"recorded {item}: {amount}"

        return add_expense


def _agent(model: Any, ledger: Ledger, sessions: Path, crash: CrashPoints | None = None) -> Agent:
    return Agent(
        model=model,
        tools=[ledger.tool()],
        conversation_manager=SlidingWindowConversationManager(window_size=4),
        session_manager=DurableSessionManager("trip-1", sessions, crash_points=crash),
        callback_handler=None,
    )


def test_it_scripts_an_agent_whose_sliding_window_trims(tmp_path):
    ledger = Ledger()
    agent = _agent(PromptScriptedModel(SCRIPT), ledger, tmp_path / "sessions")
    answers = [str(agent(prompt)).strip() for prompt in PROMPTS]
    assert answers == ANSWERS
    assert ledger.items == ["taxi", "hotel", "dinner"]
    assert agent.conversation_manager.removed_message_count > 0 and len(agent.messages) <= 4  # the window trimmed


def test_the_scripted_model_it_replaces_loses_its_place_when_the_window_trims(tmp_path):
    """Why it exists: ScriptedModel's turn is the number of assistant messages the request shows."""
    turns = [turn for prompt in PROMPTS for turn in SCRIPT[prompt]]
    agent = _agent(ScriptedModel(turns), Ledger(), tmp_path / "sessions")
    answers = []
    with pytest.raises(Exception) as failed:  # whichever way it goes wrong, not as scripted
        for prompt in PROMPTS:
            answers.append(str(agent(prompt)).strip())
        raise AssertionError(answers)
    assert answers != ANSWERS, failed.value


def test_a_fresh_model_finishes_a_crashed_invocation_in_a_trimmed_conversation(tmp_path):
    sessions = tmp_path / "sessions"
    ledger = Ledger()
    first = _agent(PromptScriptedModel(SCRIPT), ledger, sessions)
    assert [str(first(prompt)).strip() for prompt in PROMPTS[:2]] == ANSWERS[:2]
    crash = CrashPoints()

    def die_after_the_dinner(point: ToolCall) -> None:
        if point.site == "tool.committed" and point.name == "add_expense":
            raise InjectedCrash(point)

    crash.subscribe(ToolCall, die_after_the_dinner)
    dying = _agent(PromptScriptedModel(SCRIPT), ledger, sessions, crash)
    with pytest.raises(BaseException):  # noqa: B017 - the injected crash, however the SDK wraps it
        dying(PROMPTS[2])
    assert ledger.items == ["taxi", "hotel", "dinner"]
    fresh = _agent(PromptScriptedModel(SCRIPT), ledger, sessions)  # a new process would build all of these
    assert str(fresh()).strip() == "Dinner recorded."  # the committed tool result replayed, its answer asked
    assert str(fresh(PROMPTS[3])).strip() == "187 in all."
    assert ledger.items == ["taxi", "hotel", "dinner"]


def test_a_prompt_it_has_no_turns_for_fails_naming_it():
    agent = Agent(model=PromptScriptedModel(SCRIPT), tools=[Ledger().tool()], callback_handler=None)
    with pytest.raises(Exception, match=r"no turns scripted for the prompt 'Record the flight\.'") as caught:
        agent("Record the flight.")
    assert isinstance(caught.value, ScriptExhausted) or isinstance(caught.value.__cause__, ScriptExhausted)
    short = Agent(model=PromptScriptedModel({"Hi.": [[{"name": "add_expense", "input": {"item": "x", "amount": 1}}]]}),
                  tools=[Ledger().tool()], callback_handler=None)  # fmt: skip
    with pytest.raises(Exception, match=r"'Hi\.' has 1 scripted turns; the conversation asks for turn 2"):
        short("Hi.")


def test_the_documented_example_runs_as_shown(tmp_path):
    section = (REPO / "docs" / "python-agents.md").read_text(encoding="utf-8").split("## Try it offline", 1)[1]
    code = section.split("```python", 1)[1].split("```", 1)[0]
    assert "from strands_durable.testing import PromptScriptedModel" in code
    (tmp_path / "try_it.py").write_text(code, encoding="utf-8")
    ran = subprocess.run(
        [sys.executable, "try_it.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["Recorded", "the", "taxi", "and", "the", "hotel.", "Recorded", "the", "dinner."]
    assert (tmp_path / "sessions" / "session_expenses-1").is_dir()
