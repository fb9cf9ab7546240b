"""The synthetic model: a pure function of (seed, normalised request), driving a real strands.Agent."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest
from pydantic import BaseModel
from strands import Agent

from strands_durable.models import SyntheticModel
from strands_durable.models.answer import TOOL_USE_ID_RE
from strands_durable.models.synthetic import LATENCY_ENV
from tests.models.conftest import lookup_weather, text_of, user

SPECS = [lookup_weather.tool_spec]


def _plain(messages):
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def test_same_request_gives_the_same_stream_from_two_fresh_instances(collect):
    messages = [user("What is the weather in Oslo?")]
    first = collect(SyntheticModel(seed=3), messages, SPECS, system_prompt="You are terse.")
    second = collect(SyntheticModel(seed=3), messages, SPECS, system_prompt="You are terse.")
    assert first == second
    assert first[0] == {"messageStart": {"role": "assistant"}}
    assert "messageStop" in first[-2] and "metadata" in first[-1]


def test_tracking_ids_and_metadata_do_not_change_the_answer_but_system_prompt_seed_and_tools_do(collect):
    plain = [user("Summarise the quarterly report.")]
    tagged = [{**plain[0], "tracking_id": "5d7c", "metadata": {"usage": {"inputTokens": 9}}}]
    base = collect(SyntheticModel(), plain)
    assert collect(SyntheticModel(), tagged) == base
    assert collect(SyntheticModel(), plain, system_prompt="Be brief.") != base
    assert collect(SyntheticModel(seed=1), plain) != base
    assert collect(SyntheticModel(), plain, SPECS) != base


def test_answers_are_identical_in_another_process_with_another_hash_seed(collect):
    messages = [user("Plan a trip to Lisbon with museums.")]
    here = collect(SyntheticModel(seed=7), messages, SPECS)
    code = (
        "import asyncio, json, sys\n"
        "from strands_durable.models import SyntheticModel\n"
        "args = json.loads(sys.argv[1])\n"
        "async def run():\n"
        "    return [e async for e in SyntheticModel(seed=7).stream(args['m'], args['t'])]\n"
        "print(json.dumps(asyncio.run(run())))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps({"m": messages, "t": SPECS})],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    assert json.loads(out) == here


def _conversation(first_prompt: str, seed: int = 0) -> list[dict]:
    agent = Agent(model=SyntheticModel(seed=seed), tools=[lookup_weather], callback_handler=None)
    for prompt in (first_prompt, "And what should I pack?", "Summarise both answers."):
        agent(prompt)
    return _plain(agent.messages)


def test_a_real_agent_conversation_is_reproducible_and_one_changed_byte_changes_every_later_answer():
    original = _conversation("What is the weather in Oslo?")
    assert _conversation("What is the weather in Oslo?") == original
    changed = _conversation("What is the weather in Oslo!")
    assert [m["role"] for m in changed].count("assistant") >= 3
    originals = [m for m in original if m["role"] == "assistant"]
    changes = [m for m in changed if m["role"] == "assistant"]
    for before, after in zip(originals, changes, strict=False):
        assert before != after


def test_tool_use_ids_are_valid_and_tool_rounds_per_prompt_are_bounded():
    seen_several = False
    for seed in range(12):
        agent = Agent(model=SyntheticModel(seed=seed), tools=[lookup_weather], callback_handler=None)
        agent("Compare the weather in Oslo and Rome.")
        tool_turns = [
            m for m in agent.messages if m["role"] == "assistant" and any("toolUse" in b for b in m["content"])
        ]
        assert len(tool_turns) <= 2
        for turn in tool_turns:
            uses = [b["toolUse"] for b in turn["content"] if "toolUse" in b]
            seen_several |= len(uses) > 1
            assert all(TOOL_USE_ID_RE.match(u["toolUseId"]) for u in uses)
            assert len({u["toolUseId"] for u in uses}) == len(uses)
        assert agent.messages[-1]["role"] == "assistant"
        assert "ref-" in agent.messages[-1]["content"][0]["text"]
    assert seen_several


def test_usage_estimates_tokens_from_request_and_answer_sizes(collect):
    events = collect(SyntheticModel(), [user("word " * 400)])
    metadata = events[-1]["metadata"]
    usage = metadata["usage"]
    assert 400 <= usage["inputTokens"] <= 700
    assert usage["outputTokens"] == pytest.approx(len(text_of(events)) / 4, abs=1)
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]
    assert metadata["metrics"] == {"latencyMs": 0}


def test_latency_env_var_delays_each_call(collect, monkeypatch):
    monkeypatch.setenv(LATENCY_ENV, "150")
    started = time.monotonic()
    collect(SyntheticModel(), [user("hi")])
    assert time.monotonic() - started >= 0.15
    monkeypatch.setenv(LATENCY_ENV, "soon")
    with pytest.raises(ValueError, match=LATENCY_ENV):
        collect(SyntheticModel(), [user("hi")])


def test_prose_fills_format_lines_from_the_prompts_own_options_so_graph_conditions_vary(collect):
    prompt = (
        "Classify the ticket. Provide:\n1. Priority (low/medium/high)\n"
        "2. Category (technical/billing/general)\n"
        "Format:\nPriority: <priority>\nCategory: <category>\nValid: <yes/no>\n"
        "Recommendation: <APPROVE if score >= 80, otherwise REVISE>\n"
    )
    answers = [text_of(collect(SyntheticModel(seed=seed), [user(prompt)])).lower() for seed in range(30)]
    for needle in (
        "category: technical",
        "category: billing",
        "category: general",
        "priority: high",
        "valid: no",
        "valid: yes",
        "recommendation: approve",
        "recommendation: revise",
    ):
        assert any(needle in answer for answer in answers), needle
    assert all(re.search(r"ref-[0-9a-f]{12}", answer) for answer in answers)


def test_config_round_trips_and_update_config_changes_the_seed(collect):
    model = SyntheticModel(seed=1, temperature=0.2)
    assert model.get_config() == {
        "model_id": "synthetic",
        "seed": 1,
        "max_tool_rounds": 2,
        "temperature": 0.2,
    }
    before = collect(model, [user("hello")])
    model.update_config(seed=2)
    assert model.get_config()["seed"] == 2
    assert collect(model, [user("hello")]) == collect(SyntheticModel(seed=2), [user("hello")]) != before


class Person(BaseModel):
    name: str
    age: int
    tags: list[str] = []


def test_structured_output_through_the_agent_and_the_legacy_method():
    result = Agent(model=SyntheticModel(), callback_handler=None)("Who wrote this?", structured_output_model=Person)
    assert isinstance(result.structured_output, Person)

    async def legacy():
        return [e async for e in SyntheticModel().structured_output(Person, [user("Who?")])]

    import asyncio

    events = asyncio.run(legacy())
    assert isinstance(events[-1]["output"], Person)
