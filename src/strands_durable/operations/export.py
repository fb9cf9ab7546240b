"""`export_session`: one JSON-ready document holding everything a session committed (README, `sessions export`)."""

from __future__ import annotations

from typing import Any

from strands_durable.store.base import SessionStore
from strands_durable.store.state import Conversation, SessionState
from strands_durable.store.views import session_view


def export_session(store: SessionStore, session_id: str) -> dict[str, Any]:
    """`session`, `pattern_state`, `outputs`, `agents` and `journal` of a session (read without a lease).

    `agents` maps each conversation key (sorted) to its plain messages (`role` and `content` only);
    `journal` maps each conversation key to every committed tool result, in commit order: the results held
    in its messages, then the ones committed but not yet part of a message.
    """
    state = store.load(store.resolve(session_id))
    conversations = sorted(state.conversations.items())
    return {
        "session": session_view(state),
        "pattern_state": state.pattern_state,
        "outputs": outputs_of(state),
        "agents": {key: {"messages": [plain_message(m) for m in conv.messages]} for key, conv in conversations},
        "journal": {key: committed_tool_results(conv) for key, conv in conversations},
    }


def outputs_of(state: SessionState) -> dict[str, Any]:
    """Every unit's response (in commit order) and the run's `last_response`."""
    units = {unit: record.get("response") for unit, record in state.units.items()}
    last = state.pattern_state.get("last_response")
    if last is None:
        completed = [record for record in state.units.values() if record.get("status") == "completed"]
        last = completed[-1].get("response") if completed else None
    return {"units": units, "last_response": last}


def plain_message(message: dict[str, Any]) -> dict[str, Any]:
    return {"role": message.get("role"), "content": message.get("content", [])}


def committed_tool_results(conv: Conversation) -> list[dict[str, Any]]:
    results = [
        block["toolResult"]
        for message in conv.messages
        for block in message.get("content", ())
        if "toolResult" in block
    ]
    seen = {result.get("toolUseId") for result in results}
    results.extend(result for tool_use_id, result in conv.tool_results.items() if tool_use_id not in seen)
    return results
