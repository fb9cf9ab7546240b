"""`context_policy.notes` as strands-cli keeps them: one entry per finished agent unit (its agent, input, tools and
outcome), the last `include_last` entries added to every agent's system prompt under "# Previous Workflow Steps",
and the notes file written with the artifacts.

The entries are derived from the committed units and conversations, never kept anywhere else, so a resumed run
sees the same notes. Deviations: an entry's timestamp is the session's creation time (re-renders match), and the
file is written like an artifact, inside `--out` (`./artifacts/notes.md` becomes `<out>/artifacts/notes.md`).
"""

from __future__ import annotations

import json
from typing import Any

from strands_durable.agent.durable import unit_messages

TRUNCATE_CHARS = 200


def _truncated(text: str) -> str:
    return text[:TRUNCATE_CHARS] + "..." if len(text) > TRUNCATE_CHARS else text


def _unit_input(ctx: Any, unit: str) -> str:
    """The text of the first user message the unit committed, in whichever conversation it ran."""
    for conversation in list(ctx.state.conversations.values()):
        for index in unit_messages(conversation, unit):
            message = conversation.messages[index]
            texts = [b["text"] for b in message.get("content", []) if "text" in b]
            if message.get("role") == "user" and texts:
                return "\n".join(texts)
    return ""


def note_entries(ctx: Any) -> list[str]:
    """Every finished agent unit's entry, in commit order."""
    notes = ctx.spec.context_policy.notes if ctx.spec.context_policy else None
    if notes is None:
        return []
    timestamp = ctx.created_at.isoformat(timespec="seconds").replace("+00:00", "Z")
    entries = []
    units = [(u, r) for u, r in list(ctx.state.units.items()) if r.get("status") == "completed" and r.get("agent")]
    for step, (unit, record) in enumerate(units, start=1):
        agent = record["agent"]
        tools = ctx.tools.names_for(agent) if agent in ctx.spec.agents else []
        entry = {
            "timestamp": timestamp,
            "agent": agent,
            "step": step,
            "input": _unit_input(ctx, unit),
            "tools_used": tools,
            "outcome": str(record.get("response", "")),
        }
        if notes.format == "json":
            entries.append(json.dumps(entry))
            continue
        entries.append(
            f"## [{timestamp}] — Agent: {agent} (Step {step})\n"
            f"- **Input**: {_truncated(entry['input'])}\n"
            f"- **Tools used**: {', '.join(tools) if tools else 'None'}\n"
            f"- **Outcome**: {_truncated(entry['outcome'])}"
        )
    return entries


def notes_prompt_section(ctx: Any) -> str:
    """The last `include_last` entries as strands-cli injects them ('' without notes or before any entry)."""
    entries = note_entries(ctx)
    if not entries:
        return ""
    recent = entries[-ctx.spec.context_policy.notes.include_last :]
    return "\n\n# Previous Workflow Steps\n" + "\n\n".join(recent)


def notes_file(ctx: Any) -> tuple[str, bytes] | None:
    """(path, content) of the notes file to write with the artifacts, or None without notes."""
    notes = ctx.spec.context_policy.notes if ctx.spec.context_policy else None
    if notes is None:
        return None
    return notes.file, ("\n\n".join(note_entries(ctx)) + "\n").encode("utf-8")
