"""A Python agent with concurrent tools replayed from a cassette: a crash that leaves its non-idempotent `pay`
started and unrecorded is resumed with the synthesized "outcome unknown" result, which the recording never saw. The
requests after it are answered off the record (as spec workflows' are), so every crash point passes; any other
request the cassette lacks still fails, naming it."""

from __future__ import annotations

import re

import pytest

AGENT = """
import pytest
from strands import Agent

from strands_durable.faults.agents.examples import ledger_tools
from strands_durable.faults.kit.cassette import answers_unknown_outcome
from strands_durable.models.scripted import ScriptedModel
from strands_durable.sdk import DurableSessionManager

SCRIPT = [
    [{{"name": "pay", "input": {{"item": "taxi", "amount": 12}}}}, {{"name": "note", "input": {{"item": "hotel"}}}}],
    "Paid the taxi, noted the hotel.",
]


def build_agent(ctx):  # the SDK's default executor: the two tools of the turn run concurrently
    manager = DurableSessionManager(ctx.session_id, ctx.storage_dir)
    return Agent(model=ScriptedModel(SCRIPT), tools=ledger_tools(ctx), callback_handler=None,
                 session_manager=manager)


@pytest.mark.strands_chaos(cassette="ledger.cassette.json")
def test_every_point_replayed(strands_chaos):
    outcomes = strands_chaos.run_agent(build_agent, [{prompt!r}])
    asked = [q.messages for o in outcomes for r in o.resumed for q in r.requests]
    assert len(outcomes) > 20 and any(answers_unknown_outcome(messages) for messages in asked)
"""


@pytest.mark.slow
def test_requests_after_an_unknown_outcome_are_answered_off_the_record(pytester: pytest.Pytester) -> None:
    prompt = "Pay the taxi, note the hotel."
    pytester.makepyfile(test_ledger=AGENT.format(prompt=prompt))
    recorded = pytester.runpytest_subprocess("--strands-chaos", "--strands-record", "-p", "no:cacheprovider", "-q")
    assert (pytester.path / "ledger.cassette.json").exists()
    recorded.assert_outcomes(passed=1)
    replayed = pytester.runpytest_subprocess("--strands-chaos", "-p", "no:cacheprovider", "-q")
    replayed.assert_outcomes(passed=1)
    assert "not in the cassette" not in replayed.stdout.str()
    pytester.makepyfile(test_ledger=AGENT.format(prompt="A prompt the recording never sent."))
    missed = pytester.runpytest_subprocess("--strands-chaos", "-p", "no:cacheprovider", "-q")
    missed.assert_outcomes(failed=1)
    assert re.search(r"model request [0-9a-f]{12} of agent 'default' is not in the cassette", missed.stdout.str())
