"""Properties of validate and repair over generated histories in the shapes of the public bug reports."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strands_durable.history import (
    SYNTHESIZED_RESULT_TEXT,
    check_reasoning_preserved,
    repair,
    validate,
)

from .history_shapes import FAULTS, Case, histories, result, text, user

deterministic = settings(
    derandomize=True,
    database=None,
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

strategies = st.sampled_from(["synthesize", "drop"])
VALID_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def blocks(messages: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [b for m in messages for b in m["content"] if kind in b]


def completed(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history as the next request would carry it: trailing calls answered, then a new prompt."""
    request = copy.deepcopy(messages)
    if request and request[-1]["role"] == "assistant":
        calls = [b["toolUse"]["toolUseId"] for b in request[-1]["content"] if "toolUse" in b]
        if calls:
            request.append(user(*(result(c, "done") for c in calls)))
            request.append({"role": "assistant", "content": [text("all done")]})
    request.append(user(text("next question")))
    return request


@deterministic
@given(histories(), strategies)
def test_repaired_history_is_valid_when_stored_and_when_sent(case: Case, strategy: str) -> None:
    repaired, _ = repair(case.messages, case.journal, strategy, pending_interrupts=case.pending)
    assert validate(repaired, "all", "stored") == []
    assert validate(completed(repaired), "all", "request") == []


@deterministic
@given(histories(), strategies)
def test_repair_is_idempotent(case: Case, strategy: str) -> None:
    once, _ = repair(case.messages, case.journal, strategy, pending_interrupts=case.pending)
    twice, actions = repair(once, case.journal, strategy, pending_interrupts=case.pending)
    assert actions == []
    assert twice == once


@deterministic
@given(histories(faulty=False), strategies)
def test_valid_history_comes_back_unchanged(case: Case, strategy: str) -> None:
    assert validate(case.messages, "all", "stored") == []
    before = copy.deepcopy(case.messages)
    repaired, actions = repair(case.messages, case.journal, strategy, pending_interrupts=case.pending)
    assert actions == []
    assert repaired == before
    assert [list(m) for m in repaired] == [list(m) for m in before]  # key order too


@deterministic
@given(histories(), strategies)
def test_repair_never_mutates_its_input_and_shares_no_objects(case: Case, strategy: str) -> None:
    before = copy.deepcopy(case.messages)
    journal_before = copy.deepcopy(case.journal)
    repaired, _ = repair(case.messages, case.journal, strategy, pending_interrupts=case.pending)
    assert case.messages == before
    assert case.journal == journal_before
    inputs = {id(m) for m in case.messages} | {id(b) for m in case.messages for b in m["content"]}
    inputs |= {id(entry) for entry in case.journal.values()}
    outputs = {id(m) for m in repaired} | {id(b) for m in repaired for b in m["content"]}
    assert not inputs & outputs


@deterministic
@given(histories(), strategies)
def test_repair_keeps_intact_pairs_texts_and_reasoning_byte_identical(case: Case, strategy: str) -> None:
    repaired, _ = repair(case.messages, case.journal, strategy, pending_interrupts=case.pending)
    out_blocks = {canonical(b) for m in repaired for b in m["content"]}
    for call, answer in case.good_pairs:
        tool_use_id = call["toolUse"]["toolUseId"]
        if case.unique(tool_use_id) and VALID_ID.fullmatch(tool_use_id):
            assert canonical(call) in out_blocks
            assert canonical(answer) in out_blocks

    texts_in = Counter(b["text"] for b in blocks(case.messages, "text") if b["text"].strip())
    texts_out = Counter(b["text"] for b in blocks(repaired, "text"))
    assert texts_in - texts_out == Counter()

    reasoning_in = [canonical(b) for b in blocks(case.messages, "reasoningContent")]
    reasoning_out = [canonical(b) for b in blocks(repaired, "reasoningContent")]
    assert reasoning_out == reasoning_in
    assert check_reasoning_preserved(case.messages, repaired) == []


@deterministic
@given(histories(), strategies)
def test_reasoning_messages_are_never_merged(case: Case, strategy: str) -> None:
    repaired, _ = repair(case.messages, case.journal, strategy, pending_interrupts=case.pending)
    originals = [
        [canonical(b) for b in m["content"] if "reasoningContent" in b or "text" in b]
        for m in case.messages
        if any("reasoningContent" in b for b in m["content"])
    ]
    for message in repaired:
        if any("reasoningContent" in b for b in message["content"]):
            kept = [canonical(b) for b in message["content"] if "reasoningContent" in b or "text" in b]
            # the same reasoning and texts as one input message, minus blank texts; nothing from elsewhere
            assert any(kept == [b for b in o if json.loads(b).get("text", "x").strip()] for o in originals)


@deterministic
@given(histories(), strategies)
def test_repair_answers_exactly_the_dangling_calls(case: Case, strategy: str) -> None:
    repaired, actions = repair(case.messages, case.journal, strategy, pending_interrupts=case.pending)
    kinds = Counter(a.kind for a in actions)

    def journalled(tool_use_id: str, first: bool) -> bool:
        return first and tool_use_id in case.journal

    unanswered = [(c, thinks) for c, thinks, first in case.dangling if not journalled(c, first)]
    restored = sum(journalled(c, first) for c, _, first in case.dangling)
    if strategy == "synthesize":
        expect_synthesized, expect_dropped = len(unanswered), 0
    else:
        expect_synthesized = sum(thinks for _, thinks in unanswered)
        expect_dropped = len(unanswered) - expect_synthesized
    assert kinds["synthesized_result"] == expect_synthesized
    assert kinds["dropped_call"] == expect_dropped
    assert kinds["restored_from_journal"] == restored
    assert kinds["replaced_interrupted_result"] == sum(journalled(c, first) for c, first in case.placeholders)

    unknown_outcome = [{"text": SYNTHESIZED_RESULT_TEXT}]
    synthesized = [b for b in blocks(repaired, "toolResult") if b["toolResult"]["content"] == unknown_outcome]
    assert len(synthesized) == expect_synthesized
    marked = [
        i
        for m in repaired
        for i in m.get("metadata", {}).get("strands_durable", {}).get("synthesized_tool_results", [])
    ]
    assert sorted(marked) == sorted(b["toolResult"]["toolUseId"] for b in synthesized)
    assert len(blocks(repaired, "toolUse")) == len(case.call_ids) - expect_dropped


@deterministic
@given(histories(), strategies)
def test_repair_removes_only_what_its_actions_name(case: Case, strategy: str) -> None:
    repaired, actions = repair(case.messages, case.journal, strategy, pending_interrupts=case.pending)
    kinds = Counter(a.kind for a in actions)
    assert kinds["dropped_orphan_result"] == case.orphans
    assert kinds["dropped_duplicate_result"] == case.duplicate_results
    assert kinds["dropped_blank_text"] == case.blank_texts
    results_in = len(blocks(case.messages, "toolResult"))
    results_out = len(blocks(repaired, "toolResult"))
    added = kinds["synthesized_result"] + kinds["restored_from_journal"]
    assert results_out == results_in - case.orphans - case.duplicate_results + added
    for action in actions:
        assert str(action)  # every action reads as a sentence
    if case.trailing_ids:
        last_calls = [b["toolUse"]["toolUseId"] for b in repaired[-1]["content"] if "toolUse" in b]
        assert repaired[-1]["role"] == "assistant"
        assert len(last_calls) == len(case.trailing_ids)


def test_generator_produces_every_rule_violation_and_fault_many_times() -> None:
    """Guards the properties above against vacuity: the broken shapes they quantify over really occur."""
    tally: Counter[str] = Counter()

    @settings(derandomize=True, database=None, max_examples=400, deadline=None)
    @given(histories())
    def collect(case: Case) -> None:
        tally.update(case.faults)
        tally.update(v.rule for v in validate(case.messages, "all", "request"))
        tally["examples"] += 1

    collect()
    assert tally["examples"] >= 300
    for rule in ("V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8", "V9", "V10"):
        assert tally[rule] >= 20, (rule, tally)
    for fault in FAULTS:
        assert tally[fault] >= 10, (fault, tally)


@deterministic
@given(histories(), strategies)
def test_every_start_of_a_history_valid_as_stored_is_valid_as_stored(case: Case, strategy: str) -> None:
    """What the chaos judge relies on to validate a long conversation once per crash point's length
    (faults/kit/judge.py `_starts_a_valid_history`): under every provider's rules, a history valid as stored stays
    valid cut after any message."""
    repaired, _ = repair(case.messages, case.journal, strategy, pending_interrupts=case.pending)
    for history in (case.messages, repaired):
        if validate(history, "all", "stored") == []:
            for length in range(len(history)):
                assert validate(history[:length], "all", "stored") == [], length
