"""Check a message history against the provider rules (see `rules`); one pass, no copies, no I/O."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from .rules import RULES, rules_for
from .types import Violation

Mode = Literal["request", "stored"]

_valid_tool_use_id = re.compile(r"[a-zA-Z0-9_-]{1,64}").fullmatch


def validate(
    messages: Sequence[Mapping[str, Any]],
    provider: str = "all",
    mode: Mode = "request",
    *,
    tools_configured: bool | None = None,
    thinking: bool | None = None,
) -> list[Violation]:
    """Every rule `messages` breaks under `provider`'s profile, in message order.

    mode="request" is what is sent to a model and accepts nothing invalid. mode="stored" is what the session
    store holds: it also accepts a history that ends with one assistant turn holding toolUse blocks whose
    results are not stored yet, and it does not apply V10. V11 and V13 need facts about the whole request and
    are checked only when `thinking` / `tools_configured` are given. Message keys other than `role` and
    `content` (`tracking_id`, `metadata`, ...) are ignored.
    """
    if mode not in ("request", "stored"):
        raise ValueError(f"unknown mode {mode!r}; expected 'request' or 'stored'")
    active = rules_for(provider)
    found: list[Violation] = []

    def report(rule: str, i: int | None, j: int | None, text: str) -> None:
        if rule in active:
            found.append(Violation(rule, i, j, text, RULES[rule].provider_error))

    check_v8 = "V8" in active
    check_v9 = "V9" in active
    check_v5 = "V5" in active
    final_assistant_may_be_empty = provider == "anthropic"

    n = len(messages)
    seen_ids: set[str] = set()
    turn_role: str | None = None
    first_turn = True
    # ids of the current assistant turn's calls, or (in a user turn) of the calls it must answer -> location
    uses: dict[str, tuple[int, int]] = {}
    answered: set[str] = set()
    saw_other_block = False
    first_tool_block: tuple[int, int] | None = None
    last_role: str | None = None

    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, Mapping) else None
        content = msg.get("content") if role is not None else None
        if (role != "user" and role != "assistant") or not isinstance(content, list):
            report("V0", i, None, "not a message: needs role 'user' or 'assistant' and a content list")
            continue

        if role != turn_role:
            if turn_role == "user":
                _report_unanswered(report, uses, answered)
                uses = {}
            elif turn_role == "assistant":
                answered = set()
                saw_other_block = False
            if turn_role is not None:
                first_turn = False
            turn_role = role
        elif last_role is not None:
            report("V2", i, None, f"two {role} messages in a row")
        last_role = role

        if first_turn and role != "user":
            report("V1", i, None, "the conversation starts with an assistant message")
        if not content and not (final_assistant_may_be_empty and role == "assistant" and i == n - 1):
            report("V7", i, None, "the message has empty content")

        in_user = role == "user"
        for j, block in enumerate(content):
            if not isinstance(block, dict):
                report("V0", i, j, "a content block is not an object")
                continue
            if "text" in block:
                saw_other_block = True
                value = block["text"]
                if value.__class__ is not str:
                    report("V0", i, j, "a text block whose text is not a string")
                elif check_v8 and (not value or value.isspace()):
                    report("V8", i, j, "a blank text block")
                continue
            result = block.get("toolResult")
            if result is not None:
                if first_tool_block is None:
                    first_tool_block = (i, j)
                tool_use_id = result.get("toolUseId") if isinstance(result, dict) else None
                if not in_user or not isinstance(tool_use_id, str):
                    report("V0", i, j, "a toolResult needs a string toolUseId and belongs in a user message")
                    continue
                if first_turn:
                    report("V1", i, j, f"the first user turn holds a toolResult ({tool_use_id})")
                if tool_use_id not in uses:
                    report("V4", i, j, f"toolResult {tool_use_id} answers no toolUse of the previous turn")
                elif tool_use_id in answered:
                    report("V4", i, j, f"a second toolResult for {tool_use_id}")
                else:
                    answered.add(tool_use_id)
                if check_v5 and saw_other_block:
                    report("V5", i, j, f"toolResult {tool_use_id} comes after another block of the turn")
                if check_v9 and result.get("status") == "error" and not result.get("content"):
                    report("V9", i, j, f"error toolResult {tool_use_id} has empty content")
                continue
            use = block.get("toolUse")
            if use is not None:
                if first_tool_block is None:
                    first_tool_block = (i, j)
                tool_use_id = use.get("toolUseId") if isinstance(use, dict) else None
                if in_user or not isinstance(tool_use_id, str):
                    report("V0", i, j, "a toolUse needs a string toolUseId and belongs in an assistant message")
                    continue
                if tool_use_id in seen_ids:
                    report("V6", i, j, f"toolUse id {tool_use_id} is used more than once")
                seen_ids.add(tool_use_id)
                uses.setdefault(tool_use_id, (i, j))
                if not _valid_tool_use_id(tool_use_id):
                    report("V6", i, j, f"toolUse id {tool_use_id!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$")
                continue
            saw_other_block = True

    if turn_role == "user":
        _report_unanswered(report, uses, answered)
    elif turn_role == "assistant" and uses and mode == "request":
        for tool_use_id, (i, j) in uses.items():
            report("V3", i, j, f"toolUse {tool_use_id} ends the request without a toolResult")

    if mode == "request":
        if last_role is None:
            report("V10", None, None, "the request holds no message")
        elif last_role != "user":
            report("V10", n - 1, None, "the request ends with an assistant message (prefill)")
    if thinking is not None and "V11" in active:
        _check_thinking(report, messages, thinking)
    if tools_configured is False and first_tool_block is not None:
        report("V13", *first_tool_block, "the history holds tool blocks but the request carries no tool config")
    return found


def _report_unanswered(report: Any, uses: dict[str, tuple[int, int]], answered: set[str]) -> None:
    for tool_use_id, (i, j) in uses.items():
        if tool_use_id not in answered:
            report("V3", i, j, f"toolUse {tool_use_id} has no toolResult in the next user turn")


def _check_thinking(report: Any, messages: Sequence[Mapping[str, Any]], thinking: bool) -> None:
    """V11 on the last assistant message of an open tool loop: the request ends with tool results (or, when
    stored, with the calls themselves)."""
    if not messages:
        return
    blocks = _content_of(messages[-1])
    if _role_of(messages[-1]) == "assistant":
        index = len(messages) - 1 if any("toolUse" in b for b in blocks) else None
    elif any("toolResult" in b for b in blocks):
        index = len(messages) - 2
        while index >= 0 and _role_of(messages[index]) == "user":
            index -= 1
        index = index if index >= 0 else None
    else:
        index = None
    if index is None:
        return
    content = _content_of(messages[index])
    if thinking:
        if not content or "reasoningContent" not in content[0]:
            report(
                "V11",
                index,
                0,
                "extended thinking is on but the open tool turn does not start with reasoning",
            )
    else:
        for j, block in enumerate(content):
            if "reasoningContent" in block:
                report("V11", index, j, "extended thinking is off but the open tool turn holds reasoning")


def _role_of(msg: Any) -> object:
    return msg.get("role") if isinstance(msg, Mapping) else None


def _content_of(msg: Any) -> list[dict[str, Any]]:
    content = msg.get("content") if isinstance(msg, Mapping) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def check_reasoning_preserved(
    original: Sequence[Mapping[str, Any]], candidate: Sequence[Mapping[str, Any]]
) -> list[Violation]:
    """V12: every reasoning block of `candidate` is one of `original`'s, unedited and in the same order.

    Reasoning blocks may be missing from `candidate` (a conversation manager may trim old turns); an edited,
    reordered or invented block is a violation at its place in `candidate`.
    """
    originals = [b["reasoningContent"] for m in original for b in _content_of(m) if "reasoningContent" in b]
    position = 0
    found: list[Violation] = []
    for i, msg in enumerate(candidate):
        for j, block in enumerate(_content_of(msg)):
            if "reasoningContent" not in block:
                continue
            reasoning = block["reasoningContent"]
            match = next((k for k in range(position, len(originals)) if originals[k] == reasoning), None)
            if match is None:
                found.append(
                    Violation(
                        "V12",
                        i,
                        j,
                        "a reasoning block that the original history does not hold in this order",
                        RULES["V12"].provider_error,
                    )
                )
            else:
                position = match + 1
    return found


def validate_stored_indices(indices: Iterable[int], agent_message_count: int) -> list[Violation]:
    """V14: the message indices found in storage are exactly 0..agent_message_count-1, each once.

    The store passes the indices of the message files it parsed (temp files are not data and never counted)
    and the message count of its agent record.
    """
    error = RULES["V14"].provider_error
    found: list[Violation] = []
    seen: set[int] = set()
    for index in indices:
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            found.append(Violation("V14", None, None, f"{index!r} is not a message index", error))
        elif index in seen:
            found.append(Violation("V14", index, None, f"message {index} is stored twice", error))
        elif index >= agent_message_count:
            found.append(
                Violation(
                    "V14",
                    index,
                    None,
                    f"message {index} is beyond the agent record's count of {agent_message_count}",
                    error,
                )
            )
        if isinstance(index, int):
            seen.add(index)
    for index in range(agent_message_count):
        if index not in seen:
            found.append(Violation("V14", index, None, f"message {index} is missing", error))
    return found
