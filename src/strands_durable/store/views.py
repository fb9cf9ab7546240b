"""The readable files derived from the journal (session.json, pattern_state.json, agent and message files).

They are written after the journal and may lag it, never lead it; their bytes are a pure function of state.
"""

from __future__ import annotations

import json
from typing import Any

from strands_durable.store.state import SCHEMA_VERSION, Conversation, SessionState

__all__ = [
    "agent_view",
    "dump",
    "dump_compact",
    "message_file_view",
    "message_view",
    "pattern_state_view",
    "session_view",
]


def dump(obj: Any) -> bytes:
    """Indented JSON, for the small file people read most (session.json)."""
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode()


def dump_compact(obj: Any) -> bytes:
    """One-line JSON (the fast C encoder) for files that grow with the run; `jq .` pretty-prints them."""
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def session_view(state: SessionState) -> dict[str, Any]:
    meta = state.meta
    usage = state.usage()
    return {
        "schema_version": SCHEMA_VERSION,
        "session_id": meta["session_id"],
        "workflow_name": meta.get("workflow_name"),
        "pattern": meta.get("pattern"),
        "status": state.status,
        "status_reason": state.reason,
        "created_at": meta.get("created_at"),
        "updated_at": state.updated_at,
        "spec_path": meta.get("spec_path"),
        "spec_hash": meta.get("spec_hash"),
        "variables": meta.get("variables", {}),
        "runtime": meta.get("runtime", {}),
        "token_usage": {"total": usage["total"], "input": usage["input"], "output": usage["output"]},
        "artifacts_written": sorted(state.artifacts),
        "journal_seq": state.seq,
    }


def pattern_state_view(state: SessionState) -> dict[str, Any]:
    return {"pattern": state.meta.get("pattern"), **state.pattern_state}


def agent_view(conv: Conversation) -> dict[str, Any]:
    return {
        "conversation_key": conv.key,
        "agent_id": conv.agent,
        "message_count": len(conv.messages),
        "generation": conv.generation,
        "state": conv.agent_state,
        "conversation_manager_state": conv.cm_state,
        "token_usage": conv.usage(),
    }


def message_view(conv: Conversation, index: int) -> dict[str, Any]:
    return message_file_view(index, conv.units[index], conv.messages[index])


def message_file_view(index: int, unit: str, message: dict[str, Any]) -> dict[str, Any]:
    """A message file's content from its parts (a writer that copied them out of a conversation)."""
    return {"message_id": index, "unit": unit, "message": message}
