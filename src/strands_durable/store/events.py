"""The events a commit records: one typed constructor per kind, the only place an event is built.

An event is the plain JSON object the journal stores (`{"type": <kind>, ...}`); `store/state.py` folds them into a
`SessionState`. Every writer (the runner, the durable agent, the SDK managers, repair, the stores themselves)
builds its events here, so the schema is written down once, as code. Optional fields are left out of the event
when not given (never written as null), so the JSON on disk is what earlier releases wrote
(`tests/store/test_previous_release.py` reads a session written by 0.1.0).

| kind | fields | what it records |
|---|---|---|
| session | meta | the session's metadata; the first event of every session |
| message | conv, agent, index, message, unit?, agent_state?, cm_state? | one message of a conversation |
| tool_started | conv, tool_use_id | a non-idempotent tool is about to run |
| tool_result | conv, result, agent_state?, final? | one tool's result as it finished (`final`: after the hooks) |
| unit | unit, record | a unit of work's outcome (response, status, ...) |
| pattern_state | state, or set?/extend?/unset? | the readable position: whole, or a change to the previous one |
| status | status, reason? | running, paused, completed, failed, idle |
| artifact | path, sha256, bytes | an artifact claimed before it is written |
| variables | variables, source | a hand edit of session.json honoured on resume |
| generation | conv, messages, units, backup?, strategy?, actions? | a repair's (or a fit's) new history |
| conversation | conv, agent, cm_state?, agent_state?, internal_state? | state changes not tied to a message |
| attempt | unit, conv, attempt, error, wait_s | a model call that failed transiently and is retried |
| model_usage | conv, agent, usage | a model answer's token usage, recorded as the answer arrives |
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "KINDS",
    "UNSET",
    "Event",
    "artifact",
    "attempt",
    "conversation",
    "generation",
    "message",
    "model_usage",
    "pattern_state",
    "pattern_state_change",
    "session",
    "status",
    "tool_result",
    "tool_started",
    "unit",
    "variables",
]

Event = dict[str, Any]  # one event as the journal stores it

KINDS = (
    "session",
    "message",
    "tool_started",
    "tool_result",
    "unit",
    "pattern_state",
    "status",
    "artifact",
    "variables",
    "generation",
    "conversation",
    "attempt",
    "model_usage",
)


class _Unset:
    """An optional field that was not given: left out of the event."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


def _event(kind: str, fields: dict[str, Any]) -> Event:
    event: Event = {"type": kind}
    event.update((key, value) for key, value in fields.items() if value is not UNSET)
    return event


def session(meta: dict[str, Any]) -> Event:
    return _event("session", {"meta": meta})


def message(
    conv: str,
    agent: str,
    index: int,
    message: dict[str, Any],
    *,
    unit: str = UNSET,
    agent_state: dict[str, Any] = UNSET,
    cm_state: dict[str, Any] | None = UNSET,
) -> Event:
    """Message `index` of conversation `conv` (of agent `agent`), committed by `unit`."""
    fields = {"conv": conv, "agent": agent, "unit": unit, "index": index, "message": message}
    return _event("message", {**fields, "agent_state": agent_state, "cm_state": cm_state})


def tool_started(conv: str, tool_use_id: str) -> Event:
    return _event("tool_started", {"conv": conv, "tool_use_id": tool_use_id})


def tool_result(
    conv: str, result: dict[str, Any], *, final: bool = False, agent_state: dict[str, Any] = UNSET
) -> Event:
    return _event(
        "tool_result", {"conv": conv, "result": result, "final": True if final else UNSET, "agent_state": agent_state}
    )


def unit(unit: str, record: dict[str, Any]) -> Event:
    return _event("unit", {"unit": unit, "record": record})


def pattern_state(state: dict[str, Any]) -> Event:
    """The pattern's whole position (the store journals it as a change to the previous one: `state.py`)."""
    return _event("pattern_state", {"state": state})


def pattern_state_change(
    *, set: dict[str, Any] = UNSET, extend: dict[str, list[Any]] = UNSET, unset: list[str] = UNSET
) -> Event:
    """A change to the previous position: top-level keys set, lists extended, keys removed."""
    return _event("pattern_state", {"set": set, "extend": extend, "unset": unset})


def status(status: str, reason: str | None = UNSET) -> Event:
    return _event("status", {"status": status, "reason": reason})


def artifact(path: str, sha256: str, size: int) -> Event:
    return _event("artifact", {"path": path, "sha256": sha256, "bytes": size})


def variables(variables: dict[str, Any], source: str) -> Event:
    return _event("variables", {"variables": variables, "source": source})


def generation(
    conv: str,
    messages: list[dict[str, Any]],
    units: list[str],
    *,
    backup: str = UNSET,
    strategy: str = UNSET,
    actions: list[str] = UNSET,
) -> Event:
    """Conversation `conv`'s new history (a repair, a redaction, a fit to a model's profile)."""
    fields = {"conv": conv, "messages": messages, "units": units}
    return _event("generation", {**fields, "backup": backup, "strategy": strategy, "actions": actions})


def conversation(
    conv: str,
    agent: str,
    *,
    cm_state: dict[str, Any] | None = UNSET,
    agent_state: dict[str, Any] = UNSET,
    internal_state: dict[str, Any] = UNSET,
) -> Event:
    fields = {"conv": conv, "agent": agent, "cm_state": cm_state}
    return _event("conversation", {**fields, "agent_state": agent_state, "internal_state": internal_state})


def attempt(unit: str, conv: str, attempt: int, error: str, wait_s: float) -> Event:
    return _event("attempt", {"unit": unit, "conv": conv, "attempt": attempt, "error": error, "wait_s": wait_s})


def model_usage(conv: str, agent: str, usage: dict[str, Any]) -> Event:
    return _event("model_usage", {"conv": conv, "agent": agent, "usage": usage})
