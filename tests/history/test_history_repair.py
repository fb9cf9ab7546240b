"""repair on each shape the public reports describe: exact output, exact actions."""

from __future__ import annotations

import copy

import pytest

from strands_durable.history import (
    SEPARATOR_TEXT,
    SYNTHESIZED_RESULT_TEXT,
    MalformedHistory,
    repair,
    validate,
)

from .history_shapes import assistant, journal_entry, reasoning, result, sdk_placeholder, text, use, user


def synthesized(tool_use_id: str) -> dict:
    return {"toolResult": {"toolUseId": tool_use_id, "status": "error", "content": [{"text": SYNTHESIZED_RESULT_TEXT}]}}


def marker(*ids: str) -> dict:
    return {"strands_durable": {"synthesized_tool_results": list(ids)}}


def kinds(actions) -> list[str]:
    return [a.kind for a in actions]


def test_parallel_calls_interrupted_midway_get_the_journal_result_or_an_honest_error() -> None:
    history = [
        user(text("look up a, b and c")),
        assistant(use("tooluse_a"), use("tooluse_b"), use("tooluse_c")),
        user(result("tooluse_a", "A")),
        user(text("are you there?")),
    ]
    journal = {"tooluse_b": journal_entry("tooluse_b", "B")}
    repaired, actions = repair(history, journal)
    assert repaired == [
        history[0],
        history[1],
        user(
            result("tooluse_a", "A"),
            {"toolResult": journal_entry("tooluse_b", "B")},
            synthesized("tooluse_c"),
            text("are you there?"),
            metadata=marker("tooluse_c"),
        ),
    ]
    assert kinds(actions) == ["merged_messages", "restored_from_journal", "synthesized_result"]
    assert [(a.message_index, a.tool_use_id) for a in actions[1:]] == [(2, "tooluse_b"), (2, "tooluse_c")]
    assert validate(repaired, "all", "request") == []


def test_drop_strategy_removes_the_call_and_an_assistant_message_left_empty() -> None:
    history = [
        user(text("first")),
        assistant(use("tooluse_a")),
        user(text("second")),
        assistant(text("answer")),
    ]
    repaired, actions = repair(history, strategy="drop")
    assert repaired == [user(text("first"), text("second")), assistant(text("answer"))]
    assert kinds(actions) == ["dropped_call", "dropped_empty_message", "merged_messages"]
    assert actions[0].tool_use_id == "tooluse_a"


def test_drop_strategy_keeps_the_call_of_a_reasoning_turn_and_synthesizes_instead() -> None:
    turn = assistant(reasoning("need data", "sig-1"), use("tooluse_a"))
    history = [user(text("first")), turn, user(text("second"))]
    repaired, actions = repair(history, strategy="drop")
    assert repaired[1] == turn
    assert repaired[2] == user(synthesized("tooluse_a"), text("second"), metadata=marker("tooluse_a"))
    assert kinds(actions) == ["synthesized_result"]


def test_results_split_over_two_messages_are_merged_into_one() -> None:
    history = [
        user(text("two")),
        assistant(use("tooluse_a"), use("tooluse_b")),
        user(result("tooluse_a")),
        user(result("tooluse_b")),
        assistant(text("done")),
    ]
    repaired, actions = repair(history)
    assert repaired == [*history[:2], user(result("tooluse_a"), result("tooluse_b")), history[4]]
    assert kinds(actions) == ["merged_messages"]


def test_leading_orphan_result_is_dropped_and_its_message_with_it() -> None:
    history = [user(result("tooluse_old")), user(text("hi")), assistant(text("hello"))]
    repaired, actions = repair(history)
    assert repaired == [user(text("hi")), assistant(text("hello"))]
    assert kinds(actions) == ["merged_messages", "dropped_orphan_result"]
    assert actions[1].tool_use_id == "tooluse_old"


def test_mismatched_result_id_is_dropped_and_the_call_answered() -> None:
    history = [user(text("a")), assistant(use("tooluse_1")), user(result("tooluse_stale")), assistant(text("b"))]
    repaired, actions = repair(history)
    assert repaired[2] == user(synthesized("tooluse_1"), metadata=marker("tooluse_1"))
    assert kinds(actions) == ["dropped_orphan_result", "synthesized_result"]


def test_duplicate_result_is_dropped() -> None:
    history = [user(text("a")), assistant(use("tooluse_1")), user(result("tooluse_1", "x"), result("tooluse_1", "y"))]
    repaired, actions = repair(history)
    assert repaired == [*history[:2], user(result("tooluse_1", "x"))]
    assert kinds(actions) == ["dropped_duplicate_result"]


def test_sdk_interrupted_placeholders_plus_new_prompt_become_one_valid_turn() -> None:
    history = [
        user(text("do two things")),
        assistant(use("tooluse_a"), use("tooluse_b")),
        user(sdk_placeholder("tooluse_a"), sdk_placeholder("tooluse_b")),
        user(text("new prompt")),
    ]
    journal = {"tooluse_a": journal_entry("tooluse_a", "A really ran")}
    repaired, actions = repair(history, journal)
    assert repaired == [
        *history[:2],
        user(
            {"toolResult": journal_entry("tooluse_a", "A really ran")}, sdk_placeholder("tooluse_b"), text("new prompt")
        ),
    ]
    assert kinds(actions) == ["merged_messages", "replaced_interrupted_result"]
    assert validate(repaired, "bedrock") == []


def test_text_before_results_is_moved_after_them() -> None:
    history = [user(text("a")), assistant(use("tooluse_1")), user(text("here you go"), result("tooluse_1"))]
    repaired, actions = repair(history)
    assert repaired[2] == user(result("tooluse_1"), text("here you go"))
    assert kinds(actions) == ["moved_results_first"]


def test_blank_text_and_empty_messages_are_dropped() -> None:
    history = [
        user(text("a"), text("  ")),
        assistant(),
        {"role": "user", "content": [text("")]},
        assistant(text("b"), text("\n")),
    ]
    repaired, actions = repair(history)
    assert repaired == [user(text("a")), assistant(text("b"))]
    assert kinds(actions) == [
        "dropped_blank_text",
        "dropped_blank_text",
        "dropped_blank_text",
        "dropped_empty_message",
        "dropped_empty_message",
    ]


def test_empty_error_result_gets_a_text() -> None:
    failed = {"toolResult": {"toolUseId": "tooluse_1", "status": "error", "content": []}}
    history = [user(text("a")), assistant(use("tooluse_1")), user(failed)]
    repaired, actions = repair(history)
    assert repaired[2]["content"][0]["toolResult"]["content"] == [
        {"text": "the tool reported an error without details"}
    ]
    assert kinds(actions) == ["filled_error_result"]
    assert validate(repaired, "bedrock", "stored") == []


def test_duplicate_tool_use_id_is_renamed_with_its_result() -> None:
    history = [
        user(text("a")),
        assistant(use("tooluse_1")),
        user(result("tooluse_1", "first")),
        assistant(use("tooluse_1")),
        user(result("tooluse_1", "second")),
    ]
    repaired, actions = repair(history, {"tooluse_1": journal_entry("tooluse_1", "first")})
    assert repaired[:3] == history[:3]
    assert repaired[3]["content"][0]["toolUse"]["toolUseId"] == "tooluse_1_1"
    assert repaired[4] == user(result("tooluse_1_1", "second"))
    assert kinds(actions) == ["renamed_tool_use_id"]
    assert validate(repaired) == []


def test_renamed_duplicate_never_takes_the_journal_result_of_the_first_call() -> None:
    history = [
        user(text("a")),
        assistant(use("tooluse_1")),
        user(result("tooluse_1", "first")),
        assistant(use("tooluse_1")),
        user(text("b")),
    ]
    repaired, _ = repair(history, {"tooluse_1": journal_entry("tooluse_1", "first")})
    assert repaired[4] == user(synthesized("tooluse_1_1"), text("b"), metadata=marker("tooluse_1_1"))


def test_malformed_id_is_renamed_and_still_finds_its_journal_result() -> None:
    history = [user(text("a")), assistant(use("call:7")), user(text("b"))]
    repaired, actions = repair(history, {"call:7": journal_entry("call:7", "seven")})
    assert repaired[1]["content"][0]["toolUse"]["toolUseId"] == "call_7"
    assert repaired[2] == user({"toolResult": journal_entry("call_7", "seven")}, text("b"))
    assert kinds(actions) == ["renamed_tool_use_id", "restored_from_journal"]


def test_reasoning_message_is_never_merged_a_separator_keeps_roles_alternating() -> None:
    thought = assistant(reasoning("plan", "sig-9"), text("first part"))
    history = [user(text("a")), thought, assistant(text("second part")), user(text("b"))]
    repaired, actions = repair(history)
    assert repaired == [history[0], thought, user(text(SEPARATOR_TEXT)), history[2], history[3]]
    assert kinds(actions) == ["inserted_separator"]


def test_history_starting_with_an_assistant_message_gets_a_separator_first() -> None:
    history = [assistant(text("hello")), user(text("hi"))]
    repaired, actions = repair(history)
    assert repaired == [user(text(SEPARATOR_TEXT)), *history]
    assert kinds(actions) == ["inserted_separator"]


def test_trailing_call_batch_is_left_for_the_resume_path() -> None:
    history = [user(text("a")), assistant(text("on it"), use("tooluse_1"), use("tooluse_2"))]
    repaired, actions = repair(history, {"tooluse_1": journal_entry("tooluse_1", "x")})
    assert (repaired, actions) == (history, [])


def test_call_pending_on_a_human_interrupt_is_left_alone() -> None:
    history = [user(text("a")), assistant(use("tooluse_ask"), use("tooluse_b")), user(result("tooluse_b"))]
    repaired, actions = repair(history, pending_interrupts=frozenset({"tooluse_ask"}))
    assert (repaired, actions) == (history, [])
    _, actions = repair(history)
    assert kinds(actions) == ["synthesized_result"]


def test_repair_keeps_stored_keys_and_does_not_mutate_its_input() -> None:
    history = [
        user(text("a"), tracking_id="t0"),
        assistant(use("tooluse_1"), tracking_id="t1", metadata={"usage": {"outputTokens": 5}}),
        user(text("b"), tracking_id="t2"),
    ]
    before = copy.deepcopy(history)
    repaired, _ = repair(history)
    assert history == before
    assert repaired[1] == history[1]
    assert repaired[2]["tracking_id"] == "t2"
    assert repaired[2]["metadata"] == marker("tooluse_1")
    assert list(repaired[2]) == ["role", "content", "tracking_id", "metadata"]


def test_merging_carries_synthesized_markers_along() -> None:
    history = [
        user(text("q")),
        assistant(use("tooluse_1")),
        user(synthesized("tooluse_1"), metadata=marker("tooluse_1")),
        user(text("and then")),
        assistant(text("ok")),
    ]
    repaired, actions = repair(history)
    assert repaired[2] == user(synthesized("tooluse_1"), text("and then"), metadata=marker("tooluse_1"))
    assert kinds(actions) == ["merged_messages"]
    earlier_marked = [user(text("q"), metadata=marker("x")), user(text("r"), metadata=marker("y"))]
    merged, _ = repair(earlier_marked)
    assert merged[0]["metadata"] == marker("x", "y")


def test_malformed_input_and_unknown_strategy_are_errors() -> None:
    with pytest.raises(MalformedHistory, match="V0 messages\\[0\\]"):
        repair([{"role": "system", "content": []}])
    with pytest.raises(MalformedHistory, match="toolUse needs"):
        repair([user(use("tooluse_1"))])
    with pytest.raises(ValueError, match="unknown repair strategy"):
        repair([], strategy="retry")  # type: ignore[arg-type]


def test_empty_history_is_fine() -> None:
    assert repair([]) == ([], [])


def test_repeated_result_of_a_renamed_call_counts_as_a_duplicate_not_an_orphan() -> None:
    history = [user(text("a")), assistant(use("call:0")), user(result("call:0", "x"), result("call:0", "x"))]
    repaired, actions = repair(history)
    assert repaired[2] == user(result("call_0", "x"))
    assert kinds(actions) == ["renamed_tool_use_id", "dropped_duplicate_result"]


def test_two_calls_of_one_turn_sharing_an_id_pair_with_results_in_order() -> None:
    history = [
        user(text("a")),
        assistant(use("tooluse_1"), use("tooluse_1")),
        user(result("tooluse_1", "x"), result("tooluse_1", "y")),
    ]
    repaired, actions = repair(history)
    assert [b["toolUse"]["toolUseId"] for b in repaired[1]["content"]] == ["tooluse_1", "tooluse_1_1"]
    assert repaired[2] == user(result("tooluse_1", "x"), result("tooluse_1_1", "y"))
    assert kinds(actions) == ["renamed_tool_use_id"]


def test_a_reused_pending_id_pauses_only_the_last_call_carrying_it() -> None:
    history = [
        user(text("a")),
        assistant(use("tooluse_1")),
        user(text("b")),
        assistant(use("tooluse_1")),
    ]
    repaired, actions = repair(history, pending_interrupts=frozenset({"tooluse_1"}))
    assert kinds(actions) == ["renamed_tool_use_id", "synthesized_result"]
    assert repaired[2] == user(synthesized("tooluse_1"), text("b"), metadata=marker("tooluse_1"))
    assert validate(repaired, "all", "stored") == []
