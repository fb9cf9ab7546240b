"""Idempotency tokens: `invocation_state["idempotency_token"]` names one invocation across processes.

An Agent's token is committed with the invocation it starts or finishes (`pattern_state["invocation_tokens"]`, in
the order given), so calling again with it finds that invocation: a finished one returns its stored result and runs
nothing, a pending one is finished. A Graph's or Swarm's own invocation keeps its token, and whether its end is
stored with nothing run since, in `pattern_state["multiagent.invocation"]`; `invocation_state["durable_new_run"]`
forces a new run. Pure reading of the session state and the events to commit; the manager commits them.
(The SDK's own `idempotency_token` argument deduplicates only calls in flight in one process, in memory.)
"""

from __future__ import annotations

from typing import Any

from strands_durable.errors import UsageError
from strands_durable.store import events
from strands_durable.store.state import Conversation, SessionState

__all__ = [
    "MULTIAGENT_KEY",
    "NEW_RUN",
    "TOKEN",
    "TOKENS_KEY",
    "Finished",
    "finished_invocation",
    "forces_new_run",
    "token_event",
    "token_of",
    "unit_of",
]

TOKEN = "idempotency_token"
NEW_RUN = "durable_new_run"
TOKENS_KEY = "invocation_tokens"  # [{"conv", "unit", "token"}]: an Agent conversation's invocations by token
MULTIAGENT_KEY = "multiagent.invocation"  # {"token", "ended", "finished_tokens"}: the Graph's or Swarm's own


def token_of(invocation_state: dict[str, Any] | None) -> str | None:
    """The caller's idempotency token (None: none given); anything but a non-empty string is refused."""
    value = (invocation_state or {}).get(TOKEN)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise UsageError(f'invocation_state["{TOKEN}"] must be a non-empty string, not {value!r}')
    return value


def forces_new_run(invocation_state: dict[str, Any] | None) -> bool:
    return bool((invocation_state or {}).get(NEW_RUN))


def unit_of(state: SessionState, conv_key: str, token: str) -> str | None:
    """The invocation of conversation `conv_key` last given `token`, or None."""
    for entry in reversed(state.pattern_state.get(TOKENS_KEY) or ()):
        if entry.get("conv") == conv_key and entry.get("token") == token:
            return str(entry["unit"])
    return None


def token_event(conv_key: str, unit: str, token: str) -> dict[str, Any]:
    """The event that gives invocation `unit` the token (committed with the invocation's start)."""
    return events.pattern_state_change(extend={TOKENS_KEY: [{"conv": conv_key, "unit": unit, "token": token}]})


class Finished:
    """A finished invocation as stored: its messages' span in the conversation and its end's record."""

    def __init__(self, unit: str, start: int, end: int, record: dict[str, Any]) -> None:
        self.unit, self.start, self.end, self.record = unit, start, end, record

    @property
    def stop_reason(self) -> str:
        return str(self.record.get("stop_reason") or "end_turn")


def finished_invocation(state: SessionState, conv: Conversation | None, unit: str) -> Finished | None:
    """`unit` when its end is stored and its last message is an answer that can be returned again (not a pause
    for a human, which the caller resumes with the responses); else None."""
    record = state.units.get(unit)
    if conv is None or record is None or record.get("stop_reason") == "interrupt":
        return None
    span = [i for i, owner in enumerate(conv.units) if owner == unit]
    if not span or conv.messages[span[-1]].get("role") != "assistant":
        return None
    if any("toolUse" in block for block in conv.messages[span[-1]].get("content", ())):
        return None
    return Finished(unit, span[0], span[-1], record)
