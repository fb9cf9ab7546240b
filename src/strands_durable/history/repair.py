"""Turn a broken history into a valid stored one, changing only what is broken and naming every change.

The passes, in order: drop blank text blocks; drop empty messages and merge runs of same-role messages (never
into or out of a message holding reasoning); give duplicate or malformed toolUse ids fresh names (and their
results with them); answer every call from the message after it (kept result, journal result, synthesized
error result, or the call dropped); tidy again; put a separator user message where two assistant turns cannot
merge or where the history starts with one.

What repair leaves alone on purpose:
- the trailing assistant message's calls when nothing follows it: that is the stored shape of a batch whose
  results are still coming (the resume path replays committed results and re-runs the rest);
- calls whose toolUseId is in `pending_interrupts` (a human-in-the-loop pause; if the id was reused, the
  last call carrying it is the paused one);
- reasoning blocks, byte for byte, and the messages holding them (no merge; strategy "drop" falls back to a
  synthesized result for a call in such a message, since removing it would edit a signed turn).
A result separated from its call by another assistant message counts as an orphan; the journal (or a
synthesized result) answers the call. A journal entry answers the first call carrying its id; a later call
reusing the id is renamed and never answered from the journal.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any, Literal

from .copying import copy_message_data
from .types import (
    METADATA_KEY,
    SDK_INTERRUPTED_TEXT,
    SEPARATOR_TEXT,
    SYNTHESIZED_RESULT_TEXT,
    MalformedHistory,
    RepairAction,
    RepairKind,
)
from .validate import validate

Strategy = Literal["synthesize", "drop"]

_valid_tool_use_id = re.compile(r"[a-zA-Z0-9_-]{1,64}").fullmatch
_invalid_id_chars = re.compile(r"[^a-zA-Z0-9_-]")
_EMPTY_ERROR_TEXT = "the tool reported an error without details"


def repair(
    messages: Sequence[Mapping[str, Any]],
    journal: Mapping[str, Mapping[str, Any]] | None = None,
    strategy: Strategy = "synthesize",
    *,
    pending_interrupts: Set[str] = frozenset(),
) -> tuple[list[dict[str, Any]], list[RepairAction]]:
    """A valid stored history made from `messages`, and the list of what was changed to get it.

    `journal` maps a toolUseId to its committed toolResult block (`{"toolUseId", "status", "content"}`); a
    call without a result gets its journal result, else (strategy "synthesize") an error result saying its
    outcome is unknown, listed in its user message's
    `metadata["strands_durable"]["synthesized_tool_results"]`, or (strategy "drop") is removed. A
    "Tool was interrupted." placeholder the Strands SDK wrote gives way to the journal's result if it has one.
    A valid history comes back equal, with no actions. The input is never mutated; the output shares no
    objects with it.
    """
    if strategy not in ("synthesize", "drop"):
        raise ValueError(f"unknown repair strategy {strategy!r}; expected 'synthesize' or 'drop'")
    malformed = [v for v in validate(messages, "all", "stored") if v.rule == "V0"]
    if malformed:
        raise MalformedHistory(f"cannot repair: {malformed[0]}")
    run = _Repair(messages, journal or {}, strategy, pending_interrupts)
    return run.result, run.actions


@dataclass
class _Message:
    """A working copy of one message: where it came from in the input, its other keys, its blocks."""

    origin: int
    data: dict[str, Any]
    content: list[dict[str, Any]]

    @property
    def role(self) -> str:
        return self.data["role"]

    @property
    def holds_reasoning(self) -> bool:
        return any("reasoningContent" in block for block in self.content)

    def materialize(self) -> dict[str, Any]:
        self.data["content"] = self.content
        return self.data


def _tool_use_id(block: dict[str, Any], kind: str) -> str | None:
    inner = block.get(kind)
    return inner["toolUseId"] if inner is not None else None


class _Repair:
    """One repair run: the passes of the module docstring over working copies, recording every action."""

    def __init__(
        self,
        messages: Sequence[Mapping[str, Any]],
        journal: Mapping[str, Mapping[str, Any]],
        strategy: Strategy,
        pending: Set[str],
    ) -> None:
        self.actions: list[RepairAction] = []
        self.journal = journal
        self.strategy = strategy
        self.pending = pending
        self.original_id: dict[str, str] = {}  # current toolUseId -> the id the input gave the call
        self.journal_key: dict[str, str] = {}  # current toolUseId -> its journal key (first calls only)
        self.last_call: dict[str, str] = {}  # input id -> current toolUseId of the last call carrying it
        use_ids = [_tool_use_id(b, "toolUse") for m in messages for b in m["content"] if "toolUse" in b]
        self.taken = set(use_ids) | {
            _tool_use_id(b, "toolResult") for m in messages for b in m["content"] if "toolResult" in b
        }

        working = [
            _Message(
                i,
                {key: None if key == "content" else copy_message_data(value) for key, value in m.items()},
                copy_message_data(list(m["content"])),
            )
            for i, m in enumerate(messages)
        ]
        self._drop_blank_text(working)
        working = self._compact(working)
        self._rename_tool_use_ids(working)
        working = self._pair(working)
        working = self._separate(self._compact(working))
        self.result = [m.materialize() for m in working]

    def act(self, kind: RepairKind, index: int, tool_use_id: str | None, description: str) -> None:
        self.actions.append(RepairAction(kind, index, tool_use_id, description))

    # -- tidying -------------------------------------------------------------------------------------------

    def _drop_blank_text(self, messages: list[_Message]) -> None:
        for m in messages:
            kept = []
            for block in m.content:
                text = block.get("text")
                if isinstance(text, str) and (not text or text.isspace()):
                    self.act("dropped_blank_text", m.origin, None, f"dropped a blank text block ({text!r})")
                else:
                    kept.append(block)
            m.content = kept

    def _compact(self, messages: list[_Message]) -> list[_Message]:
        out: list[_Message] = []
        for m in messages:
            if not m.content:
                self.act("dropped_empty_message", m.origin, None, f"dropped an empty {m.role} message")
                continue
            previous = out[-1] if out else None
            if (
                previous is not None
                and previous.role == m.role
                and not previous.holds_reasoning
                and not m.holds_reasoning
            ):
                self._merge(previous, m)
                continue
            out.append(m)
        return out

    def _merge(self, into: _Message, other: _Message) -> None:
        self.act(
            "merged_messages",
            other.origin,
            None,
            f"merged {other.role} message {other.origin} into message {into.origin} (same role in a row)",
        )
        into.content.extend(other.content)
        for key, value in other.data.items():
            if key not in into.data:
                into.data[key] = value
        _mark_synthesized(into.data, synthesized_ids(other.data))

    def _separate(self, messages: list[_Message]) -> list[_Message]:
        out: list[_Message] = []
        for m in messages:
            if m.role == "assistant" and (not out or out[-1].role == "assistant"):
                where = "before the first message" if not out else "between two assistant messages"
                self.act("inserted_separator", m.origin, None, f"inserted a separator user message {where}")
                out.append(_Message(m.origin, {"role": "user"}, [{"text": SEPARATOR_TEXT}]))
            out.append(m)
        return out

    # -- ids -----------------------------------------------------------------------------------------------

    def _rename_tool_use_ids(self, messages: list[_Message]) -> None:
        """Give every toolUse whose id is malformed or already used a fresh id; rename its result with it (the
        k-th result with an id answers the k-th call with that id in the message before; further results
        with the id repeat the first call's).

        The journal, keyed by id, is taken to speak for the first call with an id: a later call reusing the
        id never gets a journal result (this also keeps repair idempotent, since the renamed output no
        longer shows the duplicate)."""
        seen: set[str] = set()
        for index, m in enumerate(messages):
            if m.role != "assistant":
                continue
            rank: Counter[str] = Counter()
            renamed: dict[tuple[str, int], str] = {}
            for block in m.content:
                if "toolUse" not in block:
                    continue
                old = block["toolUse"]["toolUseId"]
                occurrence = rank[old]
                rank[old] += 1
                first = old not in seen
                seen.add(old)
                if first and _valid_tool_use_id(old):
                    self.original_id[old] = self.journal_key[old] = self.last_call[old] = old
                    continue
                new = self._fresh_id(old)
                block["toolUse"]["toolUseId"] = new
                self.original_id[new] = old
                self.last_call[old] = new
                if first:
                    self.journal_key[new] = old
                renamed[(old, occurrence)] = new
                why = "is not a valid id" if first else "is already used"
                self.act("renamed_tool_use_id", m.origin, new, f"renamed toolUse {old!r} to {new!r}: the id {why}")
            follower = messages[index + 1] if index + 1 < len(messages) else None
            if not renamed or follower is None or follower.role != "user":
                continue
            calls_with = rank.copy()
            rank.clear()
            for block in follower.content:
                if "toolResult" not in block:
                    continue
                old = block["toolResult"]["toolUseId"]
                # a result beyond the calls with its id repeats the first call's (and is dropped as such)
                occurrence = rank[old] if rank[old] < calls_with[old] else 0
                rank[old] += 1
                new = renamed.get((old, occurrence))
                if new is not None:
                    block["toolResult"]["toolUseId"] = new

    def _fresh_id(self, old: str) -> str:
        base = _invalid_id_chars.sub("_", old)[:56] or "tool"
        candidate = base
        suffix = 0
        while candidate in self.taken or not _valid_tool_use_id(candidate):
            suffix += 1
            candidate = f"{base}_{suffix}"
        self.taken.add(candidate)
        return candidate

    # -- pairing -------------------------------------------------------------------------------------------

    def _pair(self, messages: list[_Message]) -> list[_Message]:
        out: list[_Message] = []
        i = 0
        while i < len(messages):
            m = messages[i]
            i += 1
            if m.role == "user":
                self._drop_unanswerable_results(m)
                if m.content:
                    out.append(m)
                else:
                    self.act("dropped_empty_message", m.origin, None, "dropped a user message of orphan results")
                continue
            out.append(m)
            follower = messages[i] if i < len(messages) else None
            if follower is None or not any("toolUse" in block for block in m.content):
                continue  # no calls, or the trailing batch whose results are still coming
            if follower.role == "user":
                results = follower
                i += 1
            else:
                results = _Message(m.origin, {"role": "user"}, [])
            self._answer(m, results)
            if not m.content:
                out.pop()
                self.act("dropped_empty_message", m.origin, None, "dropped an assistant message left empty")
            if results.content:
                out.append(results)
            elif results is follower:
                self.act("dropped_empty_message", results.origin, None, "dropped a user message left empty")
        return out

    def _drop_unanswerable_results(self, m: _Message) -> None:
        """A user message that does not follow an assistant message with calls: its results answer nothing."""
        kept = []
        for block in m.content:
            if "toolResult" in block:
                tool_use_id = _tool_use_id(block, "toolResult")
                self.act(
                    "dropped_orphan_result",
                    m.origin,
                    tool_use_id,
                    f"dropped toolResult {tool_use_id}: the message before holds no call it answers",
                )
            else:
                kept.append(block)
        m.content = kept

    def _answer(self, calls: _Message, results: _Message) -> None:
        """Make `results` hold exactly one result per call of `calls`, results first."""
        call_ids = {_tool_use_id(b, "toolUse") for b in calls.content if "toolUse" in b}
        found: dict[str, dict[str, Any]] = {}
        kept: list[dict[str, Any]] = []
        others: list[dict[str, Any]] = []
        out_of_place = False
        for block in results.content:
            if "toolResult" not in block:
                others.append(block)
                continue
            tool_use_id = _tool_use_id(block, "toolResult")
            if tool_use_id not in call_ids:
                self.act(
                    "dropped_orphan_result",
                    results.origin,
                    tool_use_id,
                    f"dropped toolResult {tool_use_id}: no call with this id in the message before",
                )
            elif tool_use_id in found:
                self.act(
                    "dropped_duplicate_result",
                    results.origin,
                    tool_use_id,
                    f"dropped a second toolResult for {tool_use_id}",
                )
            else:
                found[tool_use_id] = block
                kept.append(self._prefer_journal(block, tool_use_id, results.origin))
                out_of_place = out_of_place or bool(others)

        added: list[dict[str, Any]] = []
        synthesized: list[str] = []
        remaining_calls: list[dict[str, Any]] = []
        for block in calls.content:
            tool_use_id = _tool_use_id(block, "toolUse") if "toolUse" in block else None
            if tool_use_id is None or tool_use_id in found or self._paused(tool_use_id):
                remaining_calls.append(block)
                continue
            from_journal = self._journal_result(tool_use_id)
            if from_journal is not None:
                added.append(from_journal)
                remaining_calls.append(block)
                self.act(
                    "restored_from_journal",
                    results.origin,
                    tool_use_id,
                    f"added the journal's result for {tool_use_id}",
                )
            elif self.strategy == "synthesize" or calls.holds_reasoning:
                added.append(
                    {
                        "toolResult": {
                            "toolUseId": tool_use_id,
                            "status": "error",
                            "content": [{"text": SYNTHESIZED_RESULT_TEXT}],
                        }
                    }
                )
                synthesized.append(tool_use_id)
                remaining_calls.append(block)
                note = " (its message holds reasoning, so the call is not dropped)" if self.strategy == "drop" else ""
                self.act(
                    "synthesized_result",
                    results.origin,
                    tool_use_id,
                    f"added an error result for {tool_use_id}: outcome unknown{note}",
                )
            else:
                self.act(
                    "dropped_call",
                    calls.origin,
                    tool_use_id,
                    f"dropped toolUse {tool_use_id}: no result was recorded",
                )
        calls.content = remaining_calls

        for block in (*kept, *added):
            self._fill_empty_error(block, results.origin)
        if out_of_place:
            self.act("moved_results_first", results.origin, None, "moved toolResult blocks before the other blocks")
        results.content = kept + added + others
        _mark_synthesized(results.data, synthesized)

    def _prefer_journal(self, block: dict[str, Any], tool_use_id: str, origin: int) -> dict[str, Any]:
        """The SDK's "Tool was interrupted." placeholder gives way to the journal's real result."""
        result = block["toolResult"]
        if result.get("status") != "error" or result.get("content") != [{"text": SDK_INTERRUPTED_TEXT}]:
            return block
        from_journal = self._journal_result(tool_use_id)
        if from_journal is None or from_journal == block:
            return block
        self.act(
            "replaced_interrupted_result",
            origin,
            tool_use_id,
            f"replaced the SDK's {SDK_INTERRUPTED_TEXT!r} result for {tool_use_id} with the journal's result",
        )
        return from_journal

    def _paused(self, tool_use_id: str) -> bool:
        original = self.original_id[tool_use_id]
        return original in self.pending and self.last_call[original] == tool_use_id

    def _journal_result(self, tool_use_id: str) -> dict[str, Any] | None:
        original = self.journal_key.get(tool_use_id)
        if original is None or original not in self.journal:
            return None
        entry = self.journal[original]
        if not isinstance(entry, Mapping):
            raise TypeError(f"journal entry for {original} is not a toolResult mapping: {entry!r}")
        result = copy_message_data(dict(entry))
        result["toolUseId"] = tool_use_id
        return {"toolResult": result}

    def _fill_empty_error(self, block: dict[str, Any], origin: int) -> None:
        result = block["toolResult"]
        if result.get("status") == "error" and not result.get("content"):
            result["content"] = [{"text": _EMPTY_ERROR_TEXT}]
            self.act(
                "filled_error_result",
                origin,
                result["toolUseId"],
                f"gave the empty error result for {result['toolUseId']} a text",
            )


def synthesized_ids(data: Mapping[str, Any]) -> list[str]:
    """toolUseIds a message's `synthesized_tool_results` marker names: results synthesized as "outcome unknown"
    (by the durable agent's resume or by a repair), never results a tool returned."""
    metadata = data.get("metadata")
    marker = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    ids = marker.get("synthesized_tool_results") if isinstance(marker, dict) else None
    return list(ids) if isinstance(ids, list) else []


def _mark_synthesized(data: dict[str, Any], ids: list[str]) -> None:
    if not ids:
        return
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        metadata = data["metadata"] = {}
    marker = metadata.setdefault(METADATA_KEY, {})
    listed = marker.setdefault("synthesized_tool_results", [])
    listed.extend(i for i in ids if i not in listed)
