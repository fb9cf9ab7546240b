"""The normalised session snapshot at a checkpoint, and its digest, for the chaos explorer's convergence shortcut.

A snapshot holds what a resumed run's future depends on: every conversation's messages after
`history.normalize`, its tool-result journal (pending results, started non-idempotent tools), its conversation
manager and agent state, every unit's record, the pattern state, artifacts, status and token totals. Two states
whose snapshots are byte-equal continue identically (as long as nothing lives only in memory, which the crash
points of every later unit check). `SnapshotDigest` keeps per-conversation digests between calls, so digesting
after each commit of a run, or the next crash point's states, costs the changed conversations, not the session.

A conversation's digest (`conversation_digest`) hashes its view with the messages replaced by the hash of their
canonical list, so a history that grew by a message is hashed on from where its prefix's hash stood, and a commit
costs its new messages, not the whole history; each unit's record is encoded once, and a list in the pattern state
(a chain's `step_history`) is encoded only in the items it gained.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable
from typing import Any, TypeVar

from strands_durable.history import normalize
from strands_durable.store.state import Conversation, SessionState


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()


def _hash(value: Any) -> str:
    return hashlib.sha256(_canonical(value)).hexdigest()


def conversation_view(conv: Conversation) -> dict[str, Any]:
    """One conversation, normalised: messages, pending journal entries, manager and agent state."""
    pending = [{"toolResult": result} for result in conv.tool_results.values()]
    last_uses = [
        block["toolUse"]["toolUseId"]
        for block in (conv.messages[-1].get("content", ()) if conv.messages else ())
        if "toolUse" in block
    ]
    started = [
        {"toolUse": {"toolUseId": tool_id, "started": True}} for tool_id in last_uses if tool_id in conv.tools_started
    ]
    # one normalize call over messages + journal, so the journal's toolUseIds get the messages' names
    normalised = normalize([*conv.messages, {"role": "journal", "content": pending + started}])
    return {
        "agent": conv.agent,
        "messages": normalised[:-1],
        "journal": normalised[-1]["content"],
        "cm_state": conv.cm_state,
        "agent_state": conv.agent_state,
    }


def snapshot_view(state: SessionState) -> dict[str, Any]:
    """The whole normalised snapshot as one JSON-able dict (for readable differences)."""
    return {
        "status": state.status,
        "units": dict(sorted(state.units.items())),
        "pattern_state": state.pattern_state,
        "conversations": {key: conversation_view(conv) for key, conv in sorted(state.conversations.items())},
        "artifacts": {path: info.get("sha256") for path, info in sorted(state.artifacts.items())},
        "tokens": state.usage(),
    }


def conversation_digest(conv: Conversation) -> str:
    """The digest of one conversation's normalised view (`conversation_view`), its messages stood for by the hash of
    their canonical list (what `SnapshotDigest` computes message by message)."""
    view = conversation_view(conv)
    return _hash({**view, "messages": hashlib.sha256(_canonical(view["messages"])).hexdigest()})


def _shared_prefix(mine: list[Any], items: list[Any]) -> int:
    """How many leading items `items` has in common with `mine` (equal as values): slices compared in C (shared
    items by identity), the length found by bisection (a common prefix's prefixes are common)."""
    low, high = 0, min(len(mine), len(items))
    if mine[:high] == items[:high]:
        return high
    while low < high - 1:  # mine[:low] == items[:low] and mine[:high] != items[:high]
        middle = (low + high) // 2
        if mine[low:middle] == items[low:middle]:
            low = middle
        else:
            high = middle
    return low


_Encoded = TypeVar("_Encoded", "_EncodedList", "_EncodedHistory")
_KEPT = 4  # encodings kept per conversation or pattern-state key: the golden run's, the explored runs' off it


def _nearest(kept: list[Any], items: list[Any], new: Callable[[], _Encoded]) -> _Encoded:
    """The encoding of `items` (a conversation's messages, a list in the pattern state), extended from the kept one
    sharing the longest prefix with them (`new()` when none does), and kept first. Equal items that are other objects
    (read again) replace the kept ones, so the next states of the same run compare by identity."""
    best, shared = None, -1
    for encoded in kept:
        common = _shared_prefix(encoded.items, items)
        if common > shared:
            best, shared = encoded, common
        if shared == len(items):
            break
    if best is None:
        best, shared = new(), 0
    if shared and best.items[shared - 1] is not items[shared - 1]:
        best.items[:shared] = items[:shared]
    if shared < len(items):
        best = best.extended(items, shared)
    if best in kept:
        kept.remove(best)
    kept.insert(0, best)
    del kept[_KEPT:]
    return best


class _EncodedList:
    """A list's items (never changed in place once stored) and each one's canonical encoding, so a list that grew
    (a chain's `step_history`) is encoded only in its new items."""

    __slots__ = ("items", "parts")

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.parts: list[bytes] = []

    def encoding(self, count: int) -> bytes:
        """The canonical encoding of the list of the first `count` items."""
        return b"[" + b",".join(self.parts[:count]) + b"]"

    def extended(self, items: list[Any], start: int) -> _EncodedList:
        """These encodings up to item `start` (in place when that is all of them), then `items[start:]`."""
        encoded = self
        if start < len(self.items):
            encoded = _EncodedList()
            encoded.items, encoded.parts = self.items[:start], self.parts[:start]
        encoded.items.extend(items[start:])
        encoded.parts.extend(_canonical(item) for item in items[start:])
        return encoded


class _EncodedHistory:
    """One conversation's messages as the digest encodes them, normalised one by one (`normalize(names=)`: a history
    normalised in pieces equals it normalised whole): the messages (never changed in place once committed), the
    hash of the canonical list up to each (without its closing bracket) and the toolUseIds named after each (names
    are tool_<position>)."""

    __slots__ = ("hashes", "ids", "items", "named")

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []  # the messages
        self.hashes: list[Any] = []  # hashlib objects, never updated once stored (copied to go on)
        self.ids: list[str] = []
        self.named: list[int] = []

    def messages_digest(self, count: int) -> str:
        """The hash of the canonical list of the first `count` messages."""
        if not count:
            return hashlib.sha256(b"[]").hexdigest()
        running = self.hashes[count - 1].copy()
        running.update(b"]")
        return running.hexdigest()

    def names(self, count: int) -> dict[str, str]:
        """The names of the ids the first `count` messages named."""
        named = self.named[count - 1] if count else 0
        return {tool_id: f"tool_{position}" for position, tool_id in enumerate(self.ids[:named])}

    def extended(self, messages: list[dict[str, Any]], start: int) -> _EncodedHistory:
        """These encodings up to message `start` (in place when that is all of them), then `messages[start:]`."""
        if start == len(self.items):
            history = self
        else:
            history = _EncodedHistory()
            history.items, history.hashes = self.items[:start], self.hashes[:start]
            history.named = self.named[:start]
            history.ids = self.ids[: history.named[-1] if start else 0]
        names = history.names(start)
        for message in messages[start:]:
            (normalised,) = normalize([message], names)
            part = _canonical(normalised)
            running = history.hashes[-1].copy() if history.hashes else hashlib.sha256(b"[")
            running.update(b"," + part if history.hashes else part)
            history.items.append(message)
            history.hashes.append(running)
            if len(names) > len(history.ids):  # the ids this message named first, in order
                history.ids.extend(itertools.islice(names, len(history.ids), None))
            history.named.append(len(names))
        return history


def _same(before: tuple[Any, ...], now: tuple[Any, ...]) -> bool:
    return before[:4] == now[:4] and before[4] is now[4] and before[5] is now[5]


class SnapshotDigest:
    """Digests of states that share most of their conversations (one run commit by commit, or the runs that
    explore neighbouring crash points): a conversation is digested again only when what its view is made of
    changed. The last digested inputs of each conversation are kept as shallow copies (messages are never
    changed in place once committed) and compared by equality, which in C takes pointer time for shared
    messages and stays far cheaper than normalising and hashing for equal copies read again from disk."""

    def __init__(self) -> None:
        self._conversations: dict[str, tuple[Conversation, tuple[Any, ...], tuple[Any, ...], str]] = {}
        self._histories: dict[str, list[_EncodedHistory]] = {}  # per key, the last used first
        self._units: dict[str, tuple[Any, bytes]] = {}  # unit -> (the record encoded, `"<unit>":<record>`)
        self._pattern: tuple[Any, bytes] | None = None  # (the pattern state encoded, its encoding)
        self._pattern_lists: dict[str, list[_EncodedList]] = {}  # per key of the pattern state, its lists' encodings
        self._parts: dict[str, tuple[str, bytes]] = {}  # conversation key -> (its digest, `"<key>":"<digest>"`)

    @staticmethod
    def _marker(conv: Conversation) -> tuple[Any, ...]:
        """What changes when the reducer changes a conversation object in place (its dicts are replaced whole;
        the cache holds them, so an identity cannot be reused by another object)."""
        counts = (conv.generation, len(conv.messages), len(conv.tool_results), len(conv.tools_started))
        return (*counts, conv.cm_state, conv.agent_state)

    @staticmethod
    def _inputs(conv: Conversation) -> tuple[Any, ...]:
        return (
            conv.agent,
            list(conv.messages),
            list(conv.tool_results.items()),
            frozenset(conv.tools_started),
            conv.cm_state,  # replaced whole by the reducer, never changed in place: kept and compared as they are
            conv.agent_state,
        )

    def _conversation(self, conv: Conversation) -> str:
        cached = self._conversations.get(conv.key)
        marker = self._marker(conv)
        if cached is not None and cached[0] is conv and _same(cached[1], marker):
            return cached[3]
        inputs = self._inputs(conv)
        digest = cached[3] if cached is not None and cached[2] == inputs else self._view_digest(conv)
        self._conversations[conv.key] = (conv, marker, inputs, digest)
        return digest

    def _view_digest(self, conv: Conversation) -> str:
        """`conversation_digest(conv)`, with the messages encoded and hashed once per history that holds them: a
        history that grew by a turn, or a run's that branched off the golden run's, encodes and hashes only its new
        messages. The view's keys in canonical (sorted) order: agent, agent_state, cm_state, journal, messages."""
        messages = list(conv.messages)
        best = _nearest(self._histories.setdefault(conv.key, []), messages, _EncodedHistory)
        count = len(messages)
        pending = [{"toolResult": result} for result in conv.tool_results.values()]
        last_uses = [
            block["toolUse"]["toolUseId"]
            for block in (messages[-1].get("content", ()) if messages else ())
            if "toolUse" in block
        ]
        started = [
            {"toolUse": {"toolUseId": tool_id, "started": True}}
            for tool_id in last_uses
            if tool_id in conv.tools_started
        ]
        (journal,) = normalize([{"role": "journal", "content": pending + started}], best.names(count))
        encoded = b"".join(
            [
                b'{"agent":',
                _canonical(conv.agent),
                b',"agent_state":',
                _canonical(conv.agent_state),
                b',"cm_state":',
                _canonical(conv.cm_state),
                b',"journal":',
                _canonical(journal["content"]),
                b',"messages":"',
                best.messages_digest(count).encode(),
                b'"}',
            ]
        )
        return hashlib.sha256(encoded).hexdigest()

    def digest(self, state: SessionState) -> str:
        """`_hash` of the snapshot's parts, each unit's record and the pattern state encoded once per object they
        are (the reducer replaces both whole, never changes them in place), each conversation's `"<key>":"<digest>"`
        once per digest."""
        conversations = sorted(list(state.conversations.items()))  # keys are unique: conversations never compared
        units = state.units
        artifacts = state.artifacts
        after = {"status": state.status, "tokens": state.usage()}  # encoded without its braces
        encoded = b"".join(
            [
                b'{"artifacts":',
                _canonical({path: info.get("sha256") for path, info in artifacts.items()}) if artifacts else b"{}",
                b',"conversations":{',
                b",".join([self._conversation_part(key, conv) for key, conv in conversations]),
                b'},"pattern_state":',
                self._pattern_state(state),
                b",",
                _canonical(after)[1:-1],
                b',"units":{',
                b",".join([self._unit(unit, units[unit]) for unit in sorted(units)]),
                b"}}",
            ]
        )
        return hashlib.sha256(encoded).hexdigest()

    def _conversation_part(self, key: str, conv: Conversation) -> bytes:
        """`"<key>":"<the conversation's digest>"`, encoded once per digest."""
        digest = self._conversation(conv)
        cached = self._parts.get(key)
        if cached is None or cached[0] != digest:
            cached = self._parts[key] = (digest, _canonical(key) + b':"' + digest.encode() + b'"')
        return cached[1]

    def _pattern_state(self, state: SessionState) -> bytes:
        """`_canonical(state.pattern_state)`, each list value encoded only in the items its kept encodings lack (the
        reducer extends a list such as a chain's `step_history` into a new list of the same item objects)."""
        value = state.pattern_state
        cached = self._pattern
        if cached is not None and cached[0] is value:
            return cached[1]
        if not all(type(key) is str for key in value):
            encoded = _canonical(value)  # not as read from a journal: the encoder's own key order and forms
        else:
            parts = [
                _canonical(key) + b":" + (self._pattern_list(key, item) if type(item) is list else _canonical(item))
                for key, item in sorted(value.items())
            ]
            encoded = b"{" + b",".join(parts) + b"}"
        self._pattern = (value, encoded)
        return encoded

    def _pattern_list(self, key: str, items: list[Any]) -> bytes:
        return _nearest(self._pattern_lists.setdefault(key, []), items, _EncodedList).encoding(len(items))

    def _unit(self, unit: str, record: Any) -> bytes:
        """`"<unit>":<record>` encoded, kept per unit with the record it encodes (compared by identity)."""
        cached = self._units.get(unit)
        if cached is None or cached[0] is not record:
            cached = self._units[unit] = (record, _canonical(unit) + b":" + _canonical(record))
        return cached[1]


def snapshot_digest(state: SessionState) -> str:
    """The digest of one state, computed from scratch."""
    return SnapshotDigest().digest(state)
