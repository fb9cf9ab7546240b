"""Message builders and a hypothesis generator of broken histories in the shapes public reports describe.

The generator builds a conversation turn by turn and records, while it builds, what a correct repair must do
(which calls dangle, which results are orphans, which pairs are intact), so the property tests compare repair
against facts fixed at generation time rather than against a second implementation of repair.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from strands_durable.history import SDK_INTERRUPTED_TEXT

Message = dict[str, Any]
Block = dict[str, Any]


def user(*blocks: Block, **extra: Any) -> Message:
    return {"role": "user", "content": list(blocks), **extra}


def assistant(*blocks: Block, **extra: Any) -> Message:
    return {"role": "assistant", "content": list(blocks), **extra}


def text(value: str) -> Block:
    return {"text": value}


def use(tool_use_id: str, name: str = "lookup", **tool_input: Any) -> Block:
    return {"toolUse": {"toolUseId": tool_use_id, "name": name, "input": tool_input or {"q": tool_use_id}}}


def result(tool_use_id: str, value: str = "ok", status: str = "success") -> Block:
    return {"toolResult": {"toolUseId": tool_use_id, "status": status, "content": [{"text": value}]}}


def sdk_placeholder(tool_use_id: str) -> Block:
    return result(tool_use_id, SDK_INTERRUPTED_TEXT, status="error")


def reasoning(thought: str, signature: str = "sig") -> Block:
    return {"reasoningContent": {"reasoningText": {"text": thought, "signature": signature}}}


def journal_entry(tool_use_id: str, value: str) -> dict[str, Any]:
    return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": value}]}


FAULTS = (
    "dangling",  # a call's result missing (parallel calls interrupted midway)
    "split",  # a round's results spread over two user messages
    "text_first",  # text before the results in the results message
    "orphan",  # an extra result with an id no call has
    "mismatched",  # a result carrying the wrong id
    "duplicate_result",  # the same result twice
    "sdk_interrupted",  # "Tool was interrupted." placeholders plus a new user prompt
    "empty_error",  # an error result with empty content
    "blank_text",  # a whitespace-only text block
    "empty_message",  # a message with no content
    "duplicate_id",  # a call reusing an earlier id
    "invalid_id",  # a call id outside ^[a-zA-Z0-9_-]{1,64}$
    "double_assistant",  # two assistant text messages in a row
    "leading_orphan",  # the history starts with a user message holding a result
    "leading_assistant",  # the history starts with an assistant message
    "trailing",  # ends with a call batch whose results are not stored yet (valid stored shape)
)


@dataclass
class Case:
    """A generated history and what generation knows about it."""

    messages: list[Message]
    journal: dict[str, dict[str, Any]]
    pending: frozenset[str]
    faults: set[str] = field(default_factory=set)
    # interior calls with no result right after them: (id as generated, whether their message holds
    # reasoning, whether it is the first call with this id: the one the journal speaks for)
    dangling: list[tuple[str, bool, bool]] = field(default_factory=list)
    # calls answered by "Tool was interrupted.": (id, first call with this id)
    placeholders: list[tuple[str, bool]] = field(default_factory=list)
    good_pairs: list[tuple[Block, Block]] = field(default_factory=list)  # intact (toolUse, toolResult)
    orphans: int = 0  # results answering no call of the message before
    duplicate_results: int = 0
    blank_texts: int = 0
    trailing_ids: list[str] = field(default_factory=list)
    call_ids: list[str] = field(default_factory=list)  # every call id in order, duplicates included

    def unique(self, tool_use_id: str) -> bool:
        return self.call_ids.count(tool_use_id) == 1


@st.composite
def histories(draw: st.DrawFn, faulty: bool = True) -> Case:
    """A conversation of 1-5 turns, each a prompt, 0-2 rounds of (parallel) tool calls and a final answer.

    With `faulty`, each fault in FAULTS may be applied; without it the history is valid as stored.
    """
    enabled = {f for f in FAULTS if faulty and draw(st.integers(0, 3)) == 0}
    case = Case([], {}, frozenset(), faults=set())
    counter = iter(range(10_000))

    def fault(name: str, chance: int = 2) -> bool:
        hit = name in enabled and draw(st.integers(0, chance - 1)) == 0
        if hit:
            case.faults.add(name)
        return hit

    def new_id(round_ids: list[str]) -> str:
        # a reused id repeats one of an earlier round (calls of one round with one id are ambiguous: no
        # oracle can say which of them a result answers; a unit test covers that shape)
        earlier = [c for c in case.call_ids if c not in round_ids]
        if earlier and fault("duplicate_id", 3):
            return draw(st.sampled_from(earlier))
        n = next(counter)
        if fault("invalid_id", 4):
            return draw(st.sampled_from([f"call:{n}", f"call {n}", "c" * 70 + str(n), f"call.{n}"]))
        return draw(st.sampled_from([f"tooluse_{n}", f"call_{n:04d}", f"toolu_0{n}abc"]))

    def say(words: str) -> list[Block]:
        blocks = [text(words)]
        if fault("blank_text", 6):
            blocks.insert(draw(st.integers(0, 1)), text(draw(st.sampled_from(["", " ", "\n\t"]))))
            case.blank_texts += 1
        return blocks

    messages = case.messages
    turns = draw(st.integers(1, 5))
    for turn in range(turns):
        messages.append(user(*say(f"question {turn}")))
        rounds = draw(st.integers(0, 2))
        ended_by_sdk = False
        for round_ in range(rounds):
            calls: list[str] = []
            for _ in range(draw(st.integers(1, 3))):
                calls.append(new_id(calls))
            first = [call not in case.call_ids and call not in calls[:k] for k, call in enumerate(calls)]
            case.call_ids.extend(calls)
            thinks = draw(st.booleans())
            head = [reasoning(f"think {turn}.{round_}", f"sig{turn}{round_}")] if thinks else []
            if draw(st.booleans()):
                head += say(f"calling tools {turn}.{round_}")
            messages.append(assistant(*head, *(use(c) for c in calls)))
            if turn == turns - 1 and round_ == rounds - 1 and fault("trailing"):
                case.trailing_ids = calls
                case.pending = frozenset(c for c in calls if draw(st.booleans()))
                return _finish(draw, case, fault)

            sdk = fault("sdk_interrupted", 3)
            results: list[Block] = []
            for position, call in enumerate(calls):
                value = f"result of {call} #{position}"
                if sdk:
                    results.append(sdk_placeholder(call))
                    case.placeholders.append((call, first[position]))
                    if draw(st.booleans()):
                        case.journal[call] = journal_entry(call, value)
                elif fault("dangling", 3):
                    case.dangling.append((call, thinks, first[position]))
                    if draw(st.booleans()):
                        case.journal[call] = journal_entry(call, value)
                elif fault("mismatched", 4):
                    results.append(result(f"stale_{next(counter)}", value))
                    case.orphans += 1
                    case.dangling.append((call, thinks, first[position]))
                elif fault("empty_error", 4):
                    results.append({"toolResult": {"toolUseId": call, "status": "error", "content": []}})
                else:
                    block = result(call, value)
                    results.append(block)
                    if draw(st.booleans()):
                        case.journal[call] = journal_entry(call, value)  # committed results are journalled
                    case.good_pairs.append((use(call), block))
            if fault("orphan", 4):
                results.insert(draw(st.integers(0, len(results))), result(f"ghost_{next(counter)}"))
                case.orphans += 1
            answering = [r for r in results if r["toolResult"]["toolUseId"] in calls]
            if answering and fault("duplicate_result", 4):
                results.append(draw(st.sampled_from(answering)))
                case.duplicate_results += 1
            if sdk:
                messages.append(user(*results))
                messages.append(user(*say(f"new prompt {turn}")))
                ended_by_sdk = True
                break
            tail = say(f"about the results {turn}.{round_}") if fault("text_first", 3) else []
            if len(results) > 1 and fault("split"):
                cut = draw(st.integers(1, len(results) - 1))
                messages.append(user(*tail, *results[:cut]))
                messages.append(user(*results[cut:]))
            else:
                messages.append(user(*tail, *results))
            if not results and not tail:
                # every result of the round is missing: the user prompted again (after a crash, say)
                messages[-1] = user(*say(f"go on {turn}.{round_}"))
        thinks = draw(st.booleans())
        head = [reasoning(f"final thought {turn}", f"fsig{turn}")] if thinks else []
        answer = f"answer {turn}" + (" after interruption" if ended_by_sdk else "")
        messages.append(assistant(*head, *say(answer)))
        if fault("double_assistant", 3):
            messages.append(assistant(*say(f"and one more thing {turn}")))
    return _finish(draw, case, fault)


def _finish(draw: st.DrawFn, case: Case, fault: Any) -> Case:
    messages = case.messages
    if fault("leading_orphan"):
        messages.insert(0, user(result(f"orphan_{len(messages)}")))
        case.orphans += 1
    elif fault("leading_assistant"):
        messages.insert(0, assistant(text("hello, how can I help?")))
    if fault("empty_message"):
        for _ in range(draw(st.integers(1, 2))):
            role = draw(st.sampled_from(["user", "assistant"]))
            messages.insert(draw(st.integers(0, len(messages))), {"role": role, "content": []})
    # unrelated journal entries (other agents, other sessions of the same tool) change nothing
    if draw(st.booleans()):
        case.journal["unrelated_call"] = journal_entry("unrelated_call", "elsewhere")
    if draw(st.booleans()):
        for index, message in enumerate(messages):
            message["tracking_id"] = f"track-{index}"
    return case
