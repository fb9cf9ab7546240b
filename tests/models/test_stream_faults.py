"""F6 model-stream faults: a cut stream, duplicate or invalid tool ids, an empty text block."""

from __future__ import annotations

import pytest
from strands import Agent

from strands_durable.models import ScriptedModel, StreamCut, StreamFault, SyntheticModel
from strands_durable.models.answer import TOOL_USE_ID_RE
from tests.models.conftest import lookup_weather, user

SPECS = [lookup_weather.tool_spec]
TWO_TOOLS = [
    [
        {"name": "lookup_weather", "input": {"city": "Oslo"}},
        {"name": "lookup_weather", "input": {"city": "Rome"}},
    ]
]
ONE_TOOL = [[{"name": "lookup_weather", "input": {"city": "Oslo"}}]]


def _tool_ids(events):
    return [
        e["contentBlockStart"]["start"]["toolUse"]["toolUseId"]
        for e in events
        if "toolUse" in e.get("contentBlockStart", {}).get("start", {})
    ]


@pytest.mark.parametrize("after", [0, 1, 3])
def test_a_cut_stream_raises_after_exactly_k_events(after):
    model = SyntheticModel(stream_fault=StreamFault("cut", after_events=after))
    seen = []

    async def run():
        async for event in model.stream([user("hello there")]):
            seen.append(event)

    import asyncio

    with pytest.raises(StreamCut):
        asyncio.run(run())
    assert len(seen) == after


def test_a_cut_stream_leaves_the_agent_history_without_a_partial_answer_and_times_limits_the_fault():
    agent = Agent(model=SyntheticModel(stream_fault=StreamFault("cut", after_events=3, times=1)), callback_handler=None)
    with pytest.raises(StreamCut):
        agent("Describe the harbour.")
    assert [m["role"] for m in agent.messages] == ["user"]
    agent.messages.clear()
    result = agent("Describe the harbour.")  # the fault fired once; the retry streams in full
    assert "ref-" in str(result)


def test_duplicate_tool_ids_share_one_id(collect):
    events = collect(ScriptedModel(TWO_TOOLS, stream_fault=StreamFault("duplicate_tool_ids")), [user("go")], SPECS)
    ids = _tool_ids(events)
    assert len(ids) == 2 and ids[0] == ids[1]
    lone = collect(ScriptedModel(ONE_TOOL, stream_fault=StreamFault("duplicate_tool_ids")), [user("go")], SPECS)
    assert len(_tool_ids(lone)) == 2 and len(set(_tool_ids(lone))) == 1


def test_invalid_tool_ids_break_the_api_pattern(collect):
    events = collect(ScriptedModel(TWO_TOOLS, stream_fault=StreamFault("invalid_tool_id")), [user("go")], SPECS)
    ids = _tool_ids(events)
    assert len(ids) == 2 and not any(TOOL_USE_ID_RE.match(i) for i in ids)
    clean = collect(ScriptedModel(TWO_TOOLS), [user("go")], SPECS)
    assert all(TOOL_USE_ID_RE.match(i) for i in _tool_ids(clean))


def test_an_empty_text_block_leaves_an_assistant_turn_without_text(collect):
    events = collect(SyntheticModel(stream_fault=StreamFault("empty_text")), [user("Say something.")])
    deltas = [e["contentBlockDelta"]["delta"] for e in events if "contentBlockDelta" in e]
    assert deltas == [{"text": ""}]
    agent = Agent(model=SyntheticModel(stream_fault=StreamFault("empty_text")), callback_handler=None)
    agent("Say something.")
    last = agent.messages[-1]
    assert last["role"] == "assistant" and not any(block.get("text") for block in last["content"])


def test_unknown_fault_kinds_and_negative_positions_are_rejected():
    with pytest.raises(ValueError, match="unknown stream fault"):
        StreamFault("explode")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        StreamFault("cut", after_events=-1)
