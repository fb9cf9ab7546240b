"""The normalised session snapshot at a checkpoint, and its digest, for the chaos explorer's convergence shortcut.

A snapshot holds what a resumed run's future depends on: every conversation's messages after
`history.normalize`, its tool-result journal (pending results, started non-idempotent tools), its conversation
manager and agent state, every unit's record, the pattern state, artifacts, status and token totals. Two states
whose snapshots are byte-equal continue identically (as long as nothing lives only in memory, which the crash
points of every later unit check). `SnapshotDigest` keeps per-conversation digests between calls, so digesting
after each commit of a run, or the next crash point's states, costs the changed conversations, not the session.

A conversation's digest (`conversation_digest`) hashes its view with the messages replaced by the hash of their
canonical list, so a history that grew by a message is hashed on from where its prefix's hash stood, and a commit
costs its new messages, not the whole history; each unit's record is encoded once.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from typing import Any

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


class _EncodedHistory:
    """One conversation's messages as the digest encodes them, normalised one by one (`normalize(names=)`: a history
    normalised in pieces equals it normalised whole): the messages (never changed in place once committed), each
    one's canonical bytes, the hash of the canonical list up to each (without its closing bracket) and the
    toolUseIds named after each (names are tool_<position>)."""

    __slots__ = ("hashes", "ids", "messages", "named", "parts")

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.parts: list[bytes] = []
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

    def shared_prefix(self, messages: list[dict[str, Any]]) -> int:
        """How many leading messages `messages` has in common with these (equal as values): slices compared in C
        (shared messages by identity), the length found by bisection (a common prefix's prefixes are common)."""
        mine = self.messages
        low, high = 0, min(len(mine), len(messages))
        if mine[:high] == messages[:high]:
            return high
        while low < high - 1:  # mine[:low] == messages[:low] and mine[:high] != messages[:high]
            middle = (low + high) // 2
            if mine[low:middle] == messages[low:middle]:
                low = middle
            else:
                high = middle
        return low

    def names(self, count: int) -> dict[str, str]:
        """The names of the ids the first `count` messages named."""
        named = self.named[count - 1] if count else 0
        return {tool_id: f"tool_{position}" for position, tool_id in enumerate(self.ids[:named])}

    def extended(self, messages: list[dict[str, Any]], start: int) -> _EncodedHistory:
        """These encodings up to message `start` (in place when that is all of them), then `messages[start:]`."""
        if start == len(self.messages):
            history = self
        else:
            history = _EncodedHistory()
            history.messages, history.parts = self.messages[:start], self.parts[:start]
            history.hashes, history.named = self.hashes[:start], self.named[:start]
            history.ids = self.ids[: history.named[-1] if start else 0]
        names = history.names(start)
        for message in messages[start:]:
            (normalised,) = normalize([message], names)
            part = _canonical(normalised)
            running = history.hashes[-1].copy() if history.hashes else hashlib.sha256(b"[")
            running.update(b"," + part if history.hashes else part)
            history.messages.append(message)
            history.parts.append(part)
            history.hashes.append(running)
            if len(names) > len(history.ids):  # the ids this message named first, in order
                history.ids.extend(itertools.islice(names, len(history.ids), None))
            history.named.append(len(names))
        return history


_HISTORIES_KEPT = 4  # per conversation key: the golden run's and the explored runs' that branch off it


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
        histories = self._histories.setdefault(conv.key, [])
        best, shared = None, -1
        for history in histories:
            common = history.shared_prefix(messages)
            if common > shared:
                best, shared = history, common
            if shared == len(messages):
                break
        if best is None:
            best, shared = _EncodedHistory(), 0
        if shared and best.messages[shared - 1] is not messages[shared - 1]:
            # equal messages, other objects (read again): keep these, so this history's next states compare by identity
            best.messages[:shared] = messages[:shared]
        if shared < len(messages):
            best = best.extended(messages, shared)
        if best in histories:
            histories.remove(best)
        histories.insert(0, best)
        del histories[_HISTORIES_KEPT:]
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
        cached = self._pattern
        if cached is None or cached[0] is not state.pattern_state:
            cached = self._pattern = (state.pattern_state, _canonical(state.pattern_state))
        return cached[1]

    def _unit(self, unit: str, record: Any) -> bytes:
        """`"<unit>":<record>` encoded, kept per unit with the record it encodes (compared by identity)."""
        cached = self._units.get(unit)
        if cached is None or cached[0] is not record:
            cached = self._units[unit] = (record, _canonical(unit) + b":" + _canonical(record))
        return cached[1]


def snapshot_digest(state: SessionState) -> str:
    """The digest of one state, computed from scratch."""
    return SnapshotDigest().digest(state)
