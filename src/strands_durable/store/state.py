"""Session state as the pure fold of committed events; the same reducer serves loading, committing and views.

Events are plain JSON dicts (they are what the journal stores), built by one typed constructor per kind in
`store/events.py`, whose docstring is the schema (kinds and fields); the handlers at the end of this module fold
each kind.

A record may instead carry `checkpoint`: the whole state as `snapshot` writes it, which replaces what was folded
before it (the compacted journal, store/checkpoint.py).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import strands_durable.store.events as event_kinds

__all__ = [
    "AGENT_PATTERN",
    "SCHEMA_VERSION",
    "STATUSES",
    "Conversation",
    "EventError",
    "SessionState",
    "add_usage",
    "apply_event",
    "apply_record",
    "compact_events",
    "copy_state",
    "fold",
    "pattern_state_delta",
    "restore",
    "snapshot",
]

SCHEMA_VERSION = 2  # 2: pattern_state events may be deltas
STATUSES = ("running", "paused", "completed", "failed", "idle")  # idle: an agent session between invocations
AGENT_PATTERN = "agent"  # meta["pattern"] of a plain-Python agent session (DurableSessionManager)
_MISSING = object()


@dataclass
class Conversation:
    key: str
    agent: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    units: list[str] = field(default_factory=list)  # the unit each message belongs to
    agent_state: dict[str, Any] = field(default_factory=dict)
    cm_state: dict[str, Any] | None = None
    tool_results: dict[str, dict[str, Any]] = field(default_factory=dict)  # toolUseId -> toolResult
    tools_started: set[str] = field(default_factory=set)
    final_results: set[str] = field(default_factory=set)  # toolUseIds whose result after the hooks is committed
    internal_state: dict[str, Any] = field(default_factory=dict)  # the SDK's interrupt and model state
    generation: int = 0
    seqs: list[int] = field(default_factory=list)  # the journal record that committed each message
    tokens: dict[str, int] = field(default_factory=lambda: {"input": 0, "output": 0, "total": 0})
    lost_tokens: dict[str, int] = field(default_factory=lambda: {"input": 0, "output": 0, "total": 0})
    awaiting: dict[str, int] | None = None  # usage of the latest model answer whose message is not committed

    def usage(self) -> dict[str, int]:
        return dict(self.tokens)

    def lost_usage(self) -> dict[str, int]:
        """Tokens of model answers that were received but never committed (a crash, a hook's retry): the
        answers recorded by a `model_usage` event and not followed by a committed assistant message."""
        lost = dict(self.lost_tokens)
        if self.awaiting:
            _add_tokens(lost, self.awaiting)
        return lost

    def copy(self) -> Conversation:
        """A copy whose containers can change independently (the messages themselves are shared)."""
        return Conversation(
            key=self.key,
            agent=self.agent,
            messages=list(self.messages),
            units=list(self.units),
            agent_state=self.agent_state,
            cm_state=self.cm_state,
            tool_results=dict(self.tool_results),
            tools_started=set(self.tools_started),
            final_results=set(self.final_results),
            internal_state=self.internal_state,
            generation=self.generation,
            seqs=list(self.seqs),
            tokens=dict(self.tokens),
            lost_tokens=dict(self.lost_tokens),
            awaiting=self.awaiting,
        )


def add_usage(total: dict[str, int], message: dict[str, Any]) -> None:
    _add_tokens(total, (message.get("metadata") or {}).get("usage") or {})


def _add_tokens(total: dict[str, int], usage: dict[str, Any]) -> None:
    """Add a model's `usage` (inputTokens, outputTokens, totalTokens) to a `{input, output, total}` count."""
    total["input"] += int(usage.get("inputTokens", 0))
    total["output"] += int(usage.get("outputTokens", 0))
    total["total"] += int(usage.get("totalTokens", 0))


@dataclass
class SessionState:
    meta: dict[str, Any] = field(default_factory=dict)
    status: str = "running"
    reason: str | None = None
    pattern_state: dict[str, Any] = field(default_factory=dict)
    units: dict[str, dict[str, Any]] = field(default_factory=dict)
    conversations: dict[str, Conversation] = field(default_factory=dict)
    artifacts: dict[str, dict[str, Any]] = field(default_factory=dict)
    attempts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # unit -> failed model attempts
    seq: int = -1
    synced_seq: int = -1  # the last record whose derived files were flushed to stable storage
    views_seq: int = -1  # the last record whose derived files were all written (not flushed) ...
    views_boot: str | None = None  # ... by a process on this boot of its machine (see `views_trusted`)
    written_boot: str | None = None  # the boot on which the last process that committed read and wrote the journal
    updated_at: str | None = None
    shared: set[str] = field(default_factory=set, repr=False, compare=False)  # conversations `copy_state` shares

    @property
    def session_id(self) -> str:
        return self.meta["session_id"]

    def trusted_seq(self, boot_id: str | None) -> int:
        """The last record up to which every readable file must agree with the journal: the last sync mark (the
        files flushed to stable storage), or a later close's mark written on this very boot (`boot_id`): what it
        wrote is in the page cache, or on disk, until a power cut or a reboot, and either changes the boot id.
        Files of later records (a crash came after them) may lag and are re-derived."""
        if boot_id is not None and self.views_boot == boot_id and self.views_seq > self.synced_seq:
            return self.views_seq
        return self.synced_seq

    def views_trusted(self, boot_id: str | None) -> bool:
        """Must every readable file agree with the journal (the session was closed, and nothing came since)?"""
        return self.trusted_seq(boot_id) == self.seq

    def usage(self) -> dict[str, int]:
        total = {"input": 0, "output": 0, "total": 0}
        for conv in list(self.conversations.values()):  # other threads may add one
            for key, value in conv.usage().items():
                total[key] += value
        return total

    def lost_usage(self) -> dict[str, int]:
        """Tokens of model answers received but never committed, over every conversation (see
        `Conversation.lost_usage`)."""
        total = {"input": 0, "output": 0, "total": 0}
        for conv in list(self.conversations.values()):
            for key, value in conv.lost_usage().items():
                total[key] += value
        return total

    def conversation(self, key: str, agent: str | None = None) -> Conversation:
        """The conversation `key` to change (created for `agent` when new; a shared one is copied first)."""
        if key in self.shared:
            self.shared.discard(key)
            self.conversations[key] = self.conversations[key].copy()
        conv = self.conversations.get(key)
        if conv is None:
            if agent is None:
                raise KeyError(key)
            conv = self.conversations[key] = Conversation(key=key, agent=agent)
        return conv


class EventError(ValueError):
    """An event that cannot apply to the state (a bug, or a journal written by something else)."""


def apply_event(state: SessionState, event: dict[str, Any]) -> None:
    kind = event.get("type")
    handler = _HANDLERS.get(kind)  # type: ignore[arg-type]
    if handler is None:
        raise EventError(f"unknown event type {kind!r}")
    handler(state, event)


def apply_record(state: SessionState, record: dict[str, Any]) -> None:
    state.seq = record["seq"]
    checkpoint = record.get("checkpoint")
    if checkpoint is not None:
        restore(state, checkpoint)
    for event in record.get("events", ()):
        handler = _HANDLERS.get(event.get("type"))  # apply_event, inlined: reading a journal runs this per event
        if handler is None:
            raise EventError(f"unknown event type {event.get('type')!r}")
        handler(state, event)
    if record.get("synced"):
        state.synced_seq = record["seq"]
    boot = record.get("views_boot")
    if boot is not None:
        state.views_seq = record["seq"]
        state.views_boot = boot
    written = record.get("boot")
    if written is not None:
        state.written_boot = written
    state.updated_at = record.get("at", state.updated_at)


def fold(records: list[dict[str, Any]], state: SessionState | None = None) -> SessionState:
    """The state after `records`, folded into `state` (default: a new, empty one)."""
    state = SessionState() if state is None else state
    for record in records:
        apply_record(state, record)
    return state


def snapshot(state: SessionState) -> dict[str, Any]:
    """The whole state as plain JSON values (what a checkpoint record holds); `restore` reads it back.
    Everything the fold keeps is kept, so a checkpoint followed by records folds to the state the full journal
    folds to."""
    return {
        "meta": state.meta,
        "status": state.status,
        "reason": state.reason,
        "pattern_state": state.pattern_state,
        "units": state.units,
        "artifacts": state.artifacts,
        "attempts": state.attempts,
        "synced_seq": state.synced_seq,
        "views_seq": state.views_seq,
        "views_boot": state.views_boot,
        "written_boot": state.written_boot,
        "conversations": {
            key: {
                "agent": conv.agent,
                "messages": conv.messages,
                "units": conv.units,
                "agent_state": conv.agent_state,
                "cm_state": conv.cm_state,
                "tool_results": conv.tool_results,
                "tools_started": sorted(conv.tools_started),
                "final_results": sorted(conv.final_results),
                "internal_state": conv.internal_state,
                "generation": conv.generation,
                "seqs": conv.seqs,
                "tokens": conv.tokens,
                "lost_tokens": conv.lost_tokens,
                "awaiting": conv.awaiting,
            }
            for key, conv in state.conversations.items()
        },
    }


def restore(state: SessionState, data: dict[str, Any]) -> None:
    """Make `state` the one `snapshot` wrote (its seq and updated_at come from the checkpoint record)."""
    state.meta = data["meta"]
    state.status = data["status"]
    state.reason = data["reason"]
    state.pattern_state = data["pattern_state"]
    state.units = data["units"]
    state.artifacts = data["artifacts"]
    state.attempts = data["attempts"]
    state.synced_seq = data["synced_seq"]
    state.views_seq = data.get("views_seq", -1)  # absent from checkpoints written before views marks existed
    state.views_boot = data.get("views_boot")
    state.written_boot = data.get("written_boot")
    state.shared = set()
    state.conversations = {
        key: Conversation(
            key=key,
            agent=conv["agent"],
            messages=conv["messages"],
            units=conv["units"],
            agent_state=conv["agent_state"],
            cm_state=conv["cm_state"],
            tool_results=conv["tool_results"],
            tools_started=set(conv["tools_started"]),
            final_results=set(conv["final_results"]),
            internal_state=conv["internal_state"],
            generation=conv["generation"],
            seqs=conv["seqs"],
            tokens=conv["tokens"],
            lost_tokens=conv.get("lost_tokens") or {"input": 0, "output": 0, "total": 0},
            awaiting=conv.get("awaiting"),
        )
        for key, conv in data["conversations"].items()
    }


def copy_state(state: SessionState) -> SessionState:
    """A copy that more records can be folded into without touching `state`.

    Conversations are shared until a record changes one (then that one is copied: `SessionState.conversation`);
    messages, results and the dicts the reducer only ever replaces whole are always shared, so a copy costs a
    few dict copies, not the history. `state` itself must not be folded into afterwards.
    """
    return dataclasses.replace(
        state,
        meta=dict(state.meta),
        units=dict(state.units),
        conversations=dict(state.conversations),
        artifacts=dict(state.artifacts),
        attempts={unit: list(attempts) for unit, attempts in state.attempts.items()},
        shared=set(state.conversations),
    )


def _session(state: SessionState, event: dict[str, Any]) -> None:
    state.meta = copy.deepcopy(event["meta"])


def _message(state: SessionState, event: dict[str, Any]) -> None:
    # the reducer's hottest path (every message of every journal read): lookups kept local, usage added inline
    key = event["conv"]
    conv = state.conversations.get(key)
    if conv is None or key in state.shared:
        conv = state.conversation(key, event["agent"])
    messages = conv.messages
    index = event["index"]
    if index != len(messages):
        raise EventError(f"message {index} of {conv.key} out of order (have {len(messages)})")
    message = event["message"]
    messages.append(message)
    conv.units.append(event.get("unit", ""))
    conv.seqs.append(state.seq)
    metadata = message.get("metadata")
    if metadata:
        usage = metadata.get("usage")
        if usage:
            tokens = conv.tokens
            tokens["input"] += int(usage.get("inputTokens", 0))
            tokens["output"] += int(usage.get("outputTokens", 0))
            tokens["total"] += int(usage.get("totalTokens", 0))
            if message.get("role") == "assistant":
                conv.awaiting = None  # the answer whose usage was recorded is committed
    if "agent_state" in event:
        conv.agent_state = event["agent_state"]
    if "cm_state" in event:
        conv.cm_state = event["cm_state"]
    if message.get("role") == "user" and (conv.tool_results or conv.tools_started):
        # a results message settles the journal entries of the previous toolUse turn
        for block in message.get("content", ()):
            result = block.get("toolResult")
            if result is not None:
                conv.tool_results.pop(result.get("toolUseId"), None)
                conv.tools_started.discard(result.get("toolUseId"))
                conv.final_results.discard(result.get("toolUseId"))


def _tool_started(state: SessionState, event: dict[str, Any]) -> None:
    state.conversation(event["conv"]).tools_started.add(event["tool_use_id"])


def _tool_result(state: SessionState, event: dict[str, Any]) -> None:
    result = event["result"]
    conv = state.conversation(event["conv"])
    conv.tool_results[result["toolUseId"]] = result
    if event.get("final"):
        conv.final_results.add(result["toolUseId"])
    if "agent_state" in event:
        conv.agent_state = event["agent_state"]


def _unit(state: SessionState, event: dict[str, Any]) -> None:
    state.units[event["unit"]] = event["record"]


def _pattern_state(state: SessionState, event: dict[str, Any]) -> None:
    if "state" in event:
        state.pattern_state = event["state"]
        return
    new = dict(state.pattern_state)  # never mutated in place: readers may hold the previous dict or its lists
    new.update(event.get("set", {}))
    for key, items in event.get("extend", {}).items():
        new[key] = [*new.get(key, ()), *items]
    for key in event.get("unset", ()):
        new.pop(key, None)
    state.pattern_state = new


def pattern_state_delta(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The `pattern_state` event that turns `old` into `new`, as a change to its top-level keys.

    Patterns replace their state whole at every unit while lists such as `step_history` only grow, so journaling
    the whole state would make the journal (and every read of it) quadratic in the workflow's length; a list that
    extends the old one is journaled as its new items only.
    """
    if not old:
        return event_kinds.pattern_state(new)
    changed: dict[str, Any] = {}
    extended: dict[str, list[Any]] = {}
    for key, value in new.items():
        before = old.get(key, _MISSING)
        if before is _MISSING or before != value:
            if isinstance(before, list) and isinstance(value, list) and value[: len(before)] == before:
                extended[key] = value[len(before) :]
            else:
                changed[key] = value
    unset = [key for key in old if key not in new]
    return event_kinds.pattern_state_change(
        set=changed or event_kinds.UNSET, extend=extended or event_kinds.UNSET, unset=unset or event_kinds.UNSET
    )


def compact_events(state: SessionState, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`events` with each whole `pattern_state` replaced by its delta against the state it will apply to."""
    if not any(e.get("type") == "pattern_state" and "state" in e for e in events):
        return events
    current = state.pattern_state
    compacted = []
    for event in events:
        if event.get("type") == "pattern_state" and "state" in event:
            compacted.append(pattern_state_delta(current, event["state"]))
            current = event["state"]
        else:
            compacted.append(event)
    return compacted


def _status(state: SessionState, event: dict[str, Any]) -> None:
    if event["status"] not in STATUSES:
        raise EventError(f"unknown status {event['status']!r}")
    state.status = event["status"]
    state.reason = event.get("reason")


def _artifact(state: SessionState, event: dict[str, Any]) -> None:
    state.artifacts[event["path"]] = {"sha256": event["sha256"], "bytes": event["bytes"]}


def _variables(state: SessionState, event: dict[str, Any]) -> None:
    state.meta["variables"] = event["variables"]


def _generation(state: SessionState, event: dict[str, Any]) -> None:
    conv = state.conversation(event["conv"])
    conv.messages = event["messages"]
    conv.units = event.get("units") or [""] * len(conv.messages)
    conv.seqs = [state.seq] * len(conv.messages)
    conv.tokens = {"input": 0, "output": 0, "total": 0}
    for message in conv.messages:
        add_usage(conv.tokens, message)
    conv.tool_results = {}
    conv.tools_started = set()
    conv.final_results = set()
    conv.generation += 1


def _conversation(state: SessionState, event: dict[str, Any]) -> None:
    conv = state.conversation(event["conv"], event["agent"])
    if "cm_state" in event:
        conv.cm_state = event["cm_state"]
    if "agent_state" in event:
        conv.agent_state = event["agent_state"]
    if "internal_state" in event:
        conv.internal_state = event["internal_state"]


def _model_usage(state: SessionState, event: dict[str, Any]) -> None:
    conv = state.conversation(event["conv"], event["agent"])
    if conv.awaiting:  # the previous answer was never committed
        conv.lost_tokens = dict(conv.lost_tokens)
        _add_tokens(conv.lost_tokens, conv.awaiting)
    conv.awaiting = event["usage"]


def _attempt(state: SessionState, event: dict[str, Any]) -> None:
    record = {key: value for key, value in event.items() if key not in ("type", "unit")}
    state.attempts.setdefault(event["unit"], []).append(record)


_HANDLERS = {
    "session": _session,
    "message": _message,
    "tool_started": _tool_started,
    "tool_result": _tool_result,
    "unit": _unit,
    "pattern_state": _pattern_state,
    "status": _status,
    "artifact": _artifact,
    "variables": _variables,
    "generation": _generation,
    "conversation": _conversation,
    "attempt": _attempt,
    "model_usage": _model_usage,
}
