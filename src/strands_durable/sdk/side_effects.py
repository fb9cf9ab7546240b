"""The stable key a tool deduplicates its side effect on: (session id, agent id, toolUseId).

A resumed invocation replays a committed tool result, but a tool that crashed after its effect and before its
result was committed runs again (at-least-once, unless marked `non_idempotent`). A tool that must act exactly
once passes this key to the system it acts on (an idempotency key, a unique constraint) so a second run is a
no-op there. The key is the same in every process that finishes the invocation.
"""

from __future__ import annotations

from typing import Any


def dedup_key(tool_context: Any) -> str:
    """`<session id>/<agent id>/<toolUseId>` for a tool declared with `@tool(context=True)`."""
    agent = tool_context.agent
    manager = getattr(agent, "_session_manager", None)
    session_id = getattr(manager, "session_id", None) or getattr(agent, "session_id", "no-session")
    return f"{session_id}/{agent.agent_id}/{tool_context.tool_use['toolUseId']}"
