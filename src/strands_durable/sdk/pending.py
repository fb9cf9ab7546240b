"""Pure reading of an agent conversation's invocations: which one is pending, and how an interrupted one closes.

An invocation is one unit of the conversation (`<agent>/inv[N]`): pending from its committed prompt until its end
(a `unit` record) is committed. Nothing here does I/O; the manager commits what these functions return.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from strands_durable.store.state import Conversation, SessionState

INTERRUPTED_ANSWER = "The previous request was interrupted before it finished; it was not completed."
INTERRUPTED_TOOL = "Interrupted before this tool's result was recorded; it was not run again."
_INVOCATION = re.compile(r"/inv\[(\d+)\]$")


@dataclass(frozen=True)
class Pending:
    """A pending invocation: its unit id and the index of its first (prompt) message in the conversation."""

    unit: str
    start: int


def invocation_unit(agent_key: str, number: int) -> str:
    return f"{agent_key}/inv[{number}]"


def next_invocation(conv: Conversation | None, agent_key: str) -> str:
    """The unit id of the conversation's next invocation."""
    highest = -1
    for unit in conv.units if conv is not None else ():
        match = _INVOCATION.search(unit)
        if match:
            highest = max(highest, int(match.group(1)))
    return invocation_unit(agent_key, highest + 1)


def last_invocation(conv: Conversation | None) -> Pending | None:
    """The conversation's last invocation (ended or not), or None when it has none."""
    if conv is None or not conv.units or not _INVOCATION.search(conv.units[-1]):
        return None
    unit = conv.units[-1]
    start = len(conv.units) - 1
    while start > 0 and conv.units[start - 1] == unit:
        start -= 1
    return Pending(unit, start)


def pending_invocation(state: SessionState | None, conv: Conversation | None) -> Pending | None:
    """The conversation's last invocation when its end is not committed, else None."""
    last = last_invocation(conv)
    if state is None or last is None or last.unit in state.units:
        return None
    return last


def same_prompt(incoming: list[dict[str, Any]], prompt: dict[str, Any]) -> bool:
    """Whether an invocation's input re-sends the pending prompt (the same content blocks), or is empty."""
    if not incoming:
        return True
    if len(incoming) != 1:
        return False
    return incoming[0].get("role") == prompt.get("role") and incoming[0].get("content") == prompt.get("content")


def tool_uses(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [block["toolUse"] for block in message.get("content", ()) if "toolUse" in block]


def closing_messages(conv: Conversation, pending: Pending) -> list[dict[str, Any]]:
    """The messages that close an interrupted invocation without running anything more: unanswered calls get
    their committed result or an "interrupted" error result; an unanswered request gets a short assistant
    message saying it was interrupted. Empty when its last committed message already answers it."""
    last = conv.messages[-1]
    if last.get("role") == "assistant":
        uses = tool_uses(last)
        if not uses:
            return []
        content = []
        for use in uses:
            result = conv.tool_results.get(use["toolUseId"]) or {
                "toolUseId": use["toolUseId"],
                "status": "error",
                "content": [{"text": INTERRUPTED_TOOL}],
            }
            content.append({"toolResult": result})
        return [{"role": "user", "content": content}, {"role": "assistant", "content": [{"text": INTERRUPTED_ANSWER}]}]
    return [{"role": "assistant", "content": [{"text": INTERRUPTED_ANSWER}]}]
