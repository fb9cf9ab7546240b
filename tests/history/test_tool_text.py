"""`tool_blocks_as_text`: tool blocks become text (rule V13 satisfied without a tool config); messages holding
reasoning, and the results of their calls, are replayed as they are; the input is never mutated."""

from __future__ import annotations

import copy

from strands_durable.history import validate
from strands_durable.history.tool_text import tool_blocks_as_text

USE = {"toolUse": {"toolUseId": "t1", "name": "add", "input": {"b": 2, "a": 1}}}
RESULT = {"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": "3"}, {"json": {"n": 3}}]}}
HISTORY = [
    {"role": "user", "content": [{"text": "add"}]},
    {"role": "assistant", "content": [USE]},
    {"role": "user", "content": [RESULT]},
    {"role": "assistant", "content": [{"text": "3"}]},
]


def test_tool_blocks_become_text_and_the_history_passes_without_a_tool_config():
    before = copy.deepcopy(HISTORY)
    fitted, actions = tool_blocks_as_text(HISTORY)
    assert before == HISTORY
    assert fitted[1]["content"] == [{"text": '[called the tool add with {"a": 1, "b": 2}]'}]
    assert fitted[2]["content"] == [{"text": '[the tool returned (success): 3 {"n": 3}]'}]
    assert [(a.kind, a.message_index, a.tool_use_id) for a in actions] == [
        ("tool_block_as_text", 1, "t1"),
        ("tool_block_as_text", 2, "t1"),
    ]
    assert validate(fitted, "anthropic", "stored", tools_configured=False) == []


def test_a_message_holding_reasoning_and_the_results_of_its_calls_are_left_as_they_are():
    reasoning = {"reasoningContent": {"reasoningText": {"text": "hm", "signature": "s"}}}
    history = [HISTORY[0], {"role": "assistant", "content": [reasoning, USE]}, *HISTORY[2:]]
    fitted, actions = tool_blocks_as_text(history)
    assert fitted == history and actions == []
    assert validate(fitted, "anthropic", "stored") == []
