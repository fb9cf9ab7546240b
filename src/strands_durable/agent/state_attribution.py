"""`agent.state` changes attributed to the tool whose task made them, so each is committed with that tool's result.

`agent.state` is one object that concurrent tools share. A change a tool makes belongs to that tool's result: were it
committed with a sibling's result that finished first, a crash before the tool's own result would keep the change
and run the tool again (its result was not stored), applying it twice. `AttributedState` records who made each
change: the tool whose call is in progress in the current context (`TOOL_CALL`, set by the session manager in
`BeforeToolCallEvent`, which runs inside the tool's task; `asyncio.to_thread`, which runs synchronous tools, copies
it), or nobody (a hook, the caller between invocations). A tool's commit takes its own changes and nobody's; a
commit of no tool takes nobody's; the results message, once every tool of the batch has ended, takes all.
A thread a tool starts itself does not inherit the context: its changes count as nobody's (docs/python-agents.md).
"""

from __future__ import annotations

import contextvars
import copy
from typing import Any

from strands.agent.state import AgentState

__all__ = ["EVERY_OWNER", "TOOL_CALL", "AttributedState", "adopt", "settle", "state_to_commit"]

TOOL_CALL: contextvars.ContextVar[str | None] = contextvars.ContextVar("strands_durable_tool_call", default=None)
EVERY_OWNER = "*every owner*"  # `state_to_commit(..., owner=EVERY_OWNER)`: the whole live state


class AttributedState(AgentState):
    """An `AgentState` that remembers, for the changes not committed yet, which tool call made each."""

    def __init__(self, initial_state: dict[str, Any] | None = None) -> None:
        super().__init__(initial_state)
        self._changes: list[tuple[int, str | None, str, tuple[Any, ...]]] = []  # (order, owner, key, op)
        self._order = 0

    def set(self, key: str, value: Any) -> None:
        with self._lock:
            super().set(key, value)
            self._note(key, ("set", copy.deepcopy(value)))

    def delete(self, key: str) -> None:
        with self._lock:
            super().delete(key)
            self._note(key, ("delete",))

    def _note(self, key: str, op: tuple[Any, ...]) -> None:
        self._order += 1
        self._changes.append((self._order, TOOL_CALL.get(), key, op))

    def view(self, committed: dict[str, Any], owner: str | None) -> tuple[dict[str, Any], int]:
        """The state to commit with `owner`'s commit: `committed` with the changes of `owner` and of nobody applied
        in the order they were made (EVERY_OWNER: the live state); and the order up to which they were taken."""
        with self._lock:
            if not any(who is None or who == owner or owner == EVERY_OWNER for _, who, _, _ in self._changes):
                return committed, self._order  # nothing to add: the commit records no state (no copy made)
            if owner == EVERY_OWNER:
                return copy.deepcopy(self._data), self._order
            state = copy.deepcopy(committed)
            for _, who, key, op in self._changes:
                if who is None or who == owner:
                    if op[0] == "set":
                        state[key] = copy.deepcopy(op[1])
                    else:
                        state.pop(key, None)
            return state, self._order

    def settle(self, owner: str | None, upto: int) -> None:
        """Forget the changes a commit took (those of `owner` and of nobody, up to order `upto`)."""
        with self._lock:
            self._changes = [
                change
                for change in self._changes
                if change[0] > upto or not (owner == EVERY_OWNER or change[1] is None or change[1] == owner)
            ]

    def disown(self) -> None:
        """Count every change not committed yet as nobody's (made before the invocation that commits them)."""
        with self._lock:
            self._changes = [(order, None, key, op) for order, _, key, op in self._changes]


def adopt(agent: Any, committed: dict[str, Any]) -> AttributedState:
    """Give `agent` an `AttributedState` holding its live state (the SDK or the user may have put a plain one in
    place); what differs from `committed` counts as changed by nobody, to be committed with the next commit."""
    state = agent.state
    if isinstance(state, AttributedState):
        state.disown()
        return state
    live = state.get()
    adopted = AttributedState(live)
    for key in sorted(set(live) | set(committed)):
        if key not in live:
            adopted._note(key, ("delete",))
        elif committed.get(key, _ABSENT) != live[key]:
            adopted._note(key, ("set", copy.deepcopy(live[key])))
    agent.state = adopted
    return adopted


_ABSENT = object()


def state_to_commit(agent: Any, committed: dict[str, Any], owner: str | None) -> tuple[dict[str, Any], int]:
    """The `agent.state` a commit by `owner` (a toolUseId, None for no tool, EVERY_OWNER) records, and the order to
    `settle` once it is committed. A plain `AgentState` (nothing attributed) is committed whole, as it is."""
    state = agent.state
    if isinstance(state, AttributedState):
        return state.view(committed, owner)
    return state.get(), 0


def settle(agent: Any, owner: str | None, upto: int) -> None:
    state = agent.state
    if isinstance(state, AttributedState):
        state.settle(owner, upto)
