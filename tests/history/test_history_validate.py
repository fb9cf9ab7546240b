"""validate: each rule on the exact shape the reference quotes, per provider profile and mode."""

from __future__ import annotations

import pytest

from strands_durable.history import (
    RULES,
    Violation,
    check_reasoning_preserved,
    rules_for,
    validate,
    validate_stored_indices,
)

from .history_shapes import assistant, reasoning, result, sdk_placeholder, text, use, user


def rules(messages, provider="all", mode="request", **kwargs) -> list[str]:
    return [v.rule for v in validate(messages, provider, mode, **kwargs)]


TOOL_LOOP = [
    user(text("what is the weather in Paris and Rome?")),
    assistant(text("let me look"), use("tooluse_1"), use("tooluse_2")),
    user(result("tooluse_1", "sunny"), result("tooluse_2", "rain")),
    assistant(text("Paris is sunny, Rome rainy.")),
    user(text("thanks")),
]


@pytest.mark.parametrize("provider", ["bedrock", "anthropic", "openai", "all"])
def test_a_complete_tool_loop_is_valid_for_every_profile(provider: str) -> None:
    assert validate(TOOL_LOOP, provider) == []
    assert validate(TOOL_LOOP, provider, "stored") == []


def test_stored_keys_tracking_id_and_metadata_are_ignored() -> None:
    stored = [dict(m, tracking_id=f"t{i}", metadata={"usage": {"inputTokens": 3}}) for i, m in enumerate(TOOL_LOOP)]
    assert validate(stored) == []


def test_violation_names_rule_place_and_the_provider_error_it_prevents() -> None:
    broken = [user(text("hi")), assistant(use("tooluse_1")), user(text("and now?"))]
    [violation] = validate(broken, "anthropic")
    assert violation == Violation(
        "V3", 1, 0, "toolUse tooluse_1 has no toolResult in the next user turn", RULES["V3"].provider_error
    )
    assert "`tool_use` ids were found without `tool_result` blocks immediately after" in violation.provider_error
    assert str(violation) == "V3 messages[1].content[0]: toolUse tooluse_1 has no toolResult in the next user turn"


# V1 -------------------------------------------------------------------------------------------------------


def test_v1_conversation_starting_with_assistant() -> None:
    history = [assistant(text("hello")), user(text("hi"))]
    assert rules(history, "bedrock") == ["V1"]
    assert rules(history, "anthropic") == ["V1"]
    assert rules(history, "openai") == []
    assert "must start with a user message" in validate(history, "bedrock")[0].provider_error


def test_v1_first_message_holding_a_tool_result_is_also_an_orphan() -> None:
    history = [user(result("tooluse_0"), text("hi")), assistant(text("hello")), user(text("go"))]
    assert sorted(rules(history, "bedrock")) == ["V1", "V4"]
    assert rules(history, "openai") == ["V4"]


# V2 -------------------------------------------------------------------------------------------------------


def test_v2_two_user_messages_in_a_row_only_bedrock_is_strict() -> None:
    history = [user(text("one")), user(text("two")), assistant(text("ok")), user(text("three"))]
    assert rules(history, "bedrock") == ["V2"]
    assert rules(history, "all") == ["V2"]
    assert rules(history, "anthropic") == []
    assert rules(history, "openai") == []


def test_v2_sdk_resume_shape_interrupted_results_plus_new_prompt() -> None:
    history = [
        user(text("do it")),
        assistant(use("tooluse_1")),
        user(sdk_placeholder("tooluse_1")),
        user(text("new prompt")),
    ]
    violations = validate(history, "bedrock")
    assert [(v.rule, v.message_index) for v in violations] == [("V2", 3)]
    assert "must alternate between user and assistant roles" in violations[0].provider_error
    assert validate(history, "anthropic") == []  # merged silently: results first, then the prompt


# V3 -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["bedrock", "anthropic", "openai"])
def test_v3_parallel_calls_interrupted_midway(provider: str) -> None:
    history = [
        user(text("two lookups")),
        assistant(use("tooluse_1"), use("tooluse_2")),
        user(result("tooluse_1")),
        assistant(text("done")),
        user(text("ok")),
    ]
    violations = validate(history, provider)
    assert [(v.rule, v.message_index, v.content_index) for v in violations] == [("V3", 1, 1)]
    assert "tooluse_2" in violations[0].message


def test_v3_results_split_over_two_messages_only_bedrock_objects_to_the_split() -> None:
    history = [
        user(text("two lookups")),
        assistant(use("tooluse_1"), use("tooluse_2")),
        user(result("tooluse_1")),
        user(result("tooluse_2")),
        assistant(text("done")),
        user(text("ok")),
    ]
    assert rules(history, "bedrock") == ["V2"]
    assert rules(history, "anthropic") == []


def test_v3_trailing_calls_are_the_one_shape_stored_mode_accepts() -> None:
    history = [user(text("look it up")), assistant(text("sure"), use("tooluse_1"), use("tooluse_2"))]
    assert validate(history, "all", "stored") == []
    assert sorted(rules(history, "all", "request")) == ["V10", "V3", "V3"]


def test_v3_stored_mode_still_rejects_an_interior_dangling_call() -> None:
    history = [
        user(text("a")),
        assistant(use("tooluse_1")),
        user(text("b")),
        assistant(use("tooluse_2")),
    ]
    assert rules(history, "all", "stored") == ["V3"]


def test_v3_stored_mode_rejects_trailing_results_that_are_partial() -> None:
    history = [user(text("a")), assistant(use("tooluse_1"), use("tooluse_2")), user(result("tooluse_1"))]
    assert rules(history, "all", "stored") == ["V3"]


# V4 -------------------------------------------------------------------------------------------------------


def test_v4_result_with_a_mismatched_id() -> None:
    history = [user(text("a")), assistant(use("tooluse_1")), user(result("tooluse_9")), assistant(text("x"))]
    violations = validate(history, "anthropic", "stored")
    assert [(v.rule, v.message_index, v.content_index) for v in violations] == [("V4", 2, 0), ("V3", 1, 0)]
    assert "unexpected `tool_use_id`" in violations[0].provider_error


def test_v4_duplicate_result_exceeds_the_number_of_calls() -> None:
    history = [user(text("a")), assistant(use("tooluse_1")), user(result("tooluse_1"), result("tooluse_1"))]
    violations = validate(history, "bedrock", "stored")
    assert [(v.rule, v.content_index) for v in violations] == [("V4", 1)]
    assert "exceeds the number of toolUse blocks" in violations[0].provider_error


def test_v4_result_answering_a_call_two_turns_back() -> None:
    history = [
        user(text("a")),
        assistant(use("tooluse_1")),
        user(result("tooluse_1")),
        assistant(text("b")),
        user(result("tooluse_1"), text("again")),
    ]
    assert rules(history, "openai") == ["V4"]


# V5 -------------------------------------------------------------------------------------------------------


def test_v5_text_before_the_results_only_anthropic() -> None:
    history = [user(text("a")), assistant(use("tooluse_1")), user(text("here:"), result("tooluse_1"))]
    violations = validate(history, "anthropic", "stored")
    assert [(v.rule, v.content_index) for v in violations] == [("V5", 1)]
    assert "Did not find N tool_result block(s) at the beginning" in violations[0].provider_error
    assert validate(history, "bedrock", "stored") == []


# V6 -------------------------------------------------------------------------------------------------------


def test_v6_duplicate_tool_use_id_across_the_history() -> None:
    history = [
        user(text("a")),
        assistant(use("tooluse_1")),
        user(result("tooluse_1")),
        assistant(use("tooluse_1")),
        user(result("tooluse_1")),
    ]
    violations = validate(history, "anthropic")
    assert [(v.rule, v.message_index) for v in violations] == [("V6", 3)]
    assert "must be unique" in violations[0].provider_error
    assert validate(history, "openai") == []


@pytest.mark.parametrize("bad_id", ["call:1", "call 1", "", "x" * 65, "tool.use"])
def test_v6_tool_use_id_outside_the_pattern(bad_id: str) -> None:
    history = [user(text("a")), assistant(use(bad_id)), user(result(bad_id))]
    assert rules(history, "bedrock") == ["V6"]


def test_v6_id_of_64_characters_is_fine() -> None:
    history = [user(text("a")), assistant(use("a" * 64)), user(result("a" * 64))]
    assert validate(history) == []


# V7 -------------------------------------------------------------------------------------------------------


def test_v7_empty_message_content() -> None:
    history = [user(text("a")), assistant(), user(text("b"))]
    violations = validate(history, "bedrock")
    assert [(v.rule, v.message_index) for v in violations] == [("V7", 1)]
    assert "is empty" in violations[0].provider_error


def test_v7_anthropic_alone_exempts_an_empty_final_assistant_message() -> None:
    history = [user(text("a")), assistant()]
    assert rules(history, "anthropic", "stored") == []
    assert rules(history, "bedrock", "stored") == ["V7"]
    assert rules(history, "all", "stored") == ["V7"]


# V8 -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("blank", ["", " ", "\n\t "])
def test_v8_blank_text_block(blank: str) -> None:
    history = [user(text("a")), assistant(text(blank), text("answer")), user(text("b"))]
    violations = validate(history, "bedrock")
    assert [(v.rule, v.message_index, v.content_index) for v in violations] == [("V8", 1, 0)]
    assert "is blank" in violations[0].provider_error
    assert validate(history, "openai") == []


def test_v8_does_not_look_inside_tool_results() -> None:
    empty_output = {"toolResult": {"toolUseId": "tooluse_1", "status": "success", "content": [{"text": ""}]}}
    history = [user(text("a")), assistant(use("tooluse_1")), user(empty_output)]
    assert validate(history, "all", "stored") == []


# V9 -------------------------------------------------------------------------------------------------------


def test_v9_error_result_without_content_only_bedrock() -> None:
    failed = {"toolResult": {"toolUseId": "tooluse_1", "status": "error", "content": []}}
    history = [user(text("a")), assistant(use("tooluse_1")), user(failed)]
    violations = validate(history, "bedrock", "stored")
    assert [(v.rule, v.message_index, v.content_index) for v in violations] == [("V9", 2, 0)]
    assert "cannot be empty when status value is error" in violations[0].provider_error
    assert validate(history, "anthropic", "stored") == []
    success_without_content = {"toolResult": {"toolUseId": "tooluse_1", "status": "success", "content": []}}
    assert validate([*history[:2], user(success_without_content)], "bedrock", "stored") == []


# V10 ------------------------------------------------------------------------------------------------------


def test_v10_request_ending_with_an_assistant_message_is_a_prefill() -> None:
    history = [user(text("a")), assistant(text("b "))]
    violations = validate(history, "anthropic")
    assert [(v.rule, v.message_index) for v in violations] == [("V10", 1)]
    assert "does not support assistant message prefill" in violations[0].provider_error
    assert validate(history, "anthropic", "stored") == []
    assert validate(history, "openai") == []


def test_v10_empty_request() -> None:
    assert rules([], "all") == ["V10"]
    assert validate([], "all", "stored") == []


# V11 ------------------------------------------------------------------------------------------------------

THINKING_LOOP = [
    user(text("a")),
    assistant(reasoning("I should look it up"), use("tooluse_1")),
    user(result("tooluse_1")),
]


def test_v11_thinking_on_open_tool_turn_must_start_with_reasoning() -> None:
    assert validate(THINKING_LOOP, thinking=True) == []
    without = [THINKING_LOOP[0], assistant(use("tooluse_1")), THINKING_LOOP[2]]
    violations = validate(without, thinking=True)
    assert [(v.rule, v.message_index, v.content_index) for v in violations] == [("V11", 1, 0)]
    assert "Expected `thinking` or `redacted_thinking`, but found `tool_use`" in violations[0].provider_error
    reasoning_second = [
        THINKING_LOOP[0],
        assistant(text("x"), reasoning("y"), use("tooluse_1")),
        THINKING_LOOP[2],
    ]
    assert rules(reasoning_second, thinking=True) == ["V11"]


def test_v11_thinking_off_open_tool_turn_holds_no_reasoning() -> None:
    assert rules(THINKING_LOOP, thinking=False) == ["V11"]
    assert rules(THINKING_LOOP, "openai", thinking=False) == []


def test_v11_is_skipped_without_the_thinking_argument_and_outside_a_tool_loop() -> None:
    assert validate(THINKING_LOOP) == []
    closed = [*THINKING_LOOP, assistant(text("done")), user(text("next"))]
    assert validate(closed, thinking=True) == []


def test_v11_applies_to_the_stored_trailing_call_batch() -> None:
    assert rules(THINKING_LOOP[:2], "all", "stored", thinking=False) == ["V11"]
    assert rules(THINKING_LOOP[:2], "all", "stored", thinking=True) == []


# V12 ------------------------------------------------------------------------------------------------------


def test_v12_edited_or_invented_reasoning_is_reported_and_trimming_is_not() -> None:
    original = [*THINKING_LOOP, assistant(reasoning("second", "s2"), text("done"))]
    assert check_reasoning_preserved(original, original) == []
    assert check_reasoning_preserved(original, original[2:]) == []  # a window trimmed the front
    edited = [*THINKING_LOOP[:1], assistant(reasoning("I should look it up", "forged"), use("tooluse_1"))]
    [violation] = check_reasoning_preserved(original, edited)
    assert (violation.rule, violation.message_index, violation.content_index) == ("V12", 1, 0)
    swapped = [assistant(reasoning("second", "s2")), assistant(reasoning("I should look it up"))]
    assert [v.message_index for v in check_reasoning_preserved(original, swapped)] == [1]


# V13 ------------------------------------------------------------------------------------------------------


def test_v13_tool_blocks_need_a_tool_config() -> None:
    violations = validate(TOOL_LOOP, "bedrock", tools_configured=False)
    assert [(v.rule, v.message_index, v.content_index) for v in violations] == [("V13", 1, 1)]
    assert "toolConfig field must be defined" in violations[0].provider_error
    assert validate(TOOL_LOOP, "bedrock", tools_configured=True) == []
    assert validate(TOOL_LOOP, "bedrock") == []
    assert validate([user(text("hi"))], "bedrock", tools_configured=False) == []


# V14 ------------------------------------------------------------------------------------------------------


def test_v14_stored_indices_contiguous_and_matching_the_agent_record() -> None:
    assert validate_stored_indices([0, 1, 2], 3) == []
    assert validate_stored_indices([2, 0, 1], 3) == []
    found = validate_stored_indices([0, 2, 2, 5, -1], 4)
    assert [(v.rule, v.message_index, v.message) for v in found] == [
        ("V14", 2, "message 2 is stored twice"),
        ("V14", 5, "message 5 is beyond the agent record's count of 4"),
        ("V14", None, "-1 is not a message index"),
        ("V14", 1, "message 1 is missing"),
        ("V14", 3, "message 3 is missing"),
    ]


# V0 and arguments -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "just a string",
        {"role": "system", "content": [text("x")]},
        {"role": "user", "content": "text"},
        {"role": "user", "content": ["text"]},
        user(use("tooluse_1")),
        assistant(result("tooluse_1")),
        assistant({"toolUse": {"name": "x", "input": {}}}),
        user({"text": 3}),
    ],
)
def test_v0_not_a_message_list(bad: object) -> None:
    assert "V0" in rules([user(text("a")), assistant(text("b")), bad, user(text("c"))], "openai")


def test_unknown_profile_and_mode_are_errors() -> None:
    with pytest.raises(ValueError, match="unknown provider profile 'gemini'"):
        validate(TOOL_LOOP, "gemini")
    with pytest.raises(ValueError, match="unknown mode"):
        validate(TOOL_LOOP, "all", "draft")  # type: ignore[arg-type]


def test_all_profile_is_the_union_of_the_others() -> None:
    union = rules_for("bedrock") | rules_for("anthropic") | rules_for("openai")
    assert rules_for("all") == union
    assert "V2" in rules_for("bedrock") and "V2" not in rules_for("anthropic")
    assert "V5" in rules_for("anthropic") and "V5" not in rules_for("bedrock")
