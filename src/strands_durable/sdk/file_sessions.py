"""Check and repair the SDK's own `FileSessionManager` sessions on disk (`strands sessions check|repair
--strands-sdk DIR SESSION_ID`), without importing strands-agents.

Check reports what a provider would reject when the session is next used: a `toolUse` without its result, two
user turns in a row, orphan results, blank text, and an interrupted last turn (a trailing `toolUse` or an
unanswered prompt: the next prompt would put two user messages in a row). Repair builds each repaired agent
directory beside the old one (message files numbered 0..n-1, `removed_message_count` kept consistent) and swaps
it in by rename, keeping the old one under `backups/<stamp>/`; a crash mid-swap is finished by running it again.
That manager takes no lock, so repair refuses (without `--force`) files changed in the last minute.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from strands_durable.errors import SessionNotFound, UsageError
from strands_durable.history import validate
from strands_durable.sdk.importing import importable_history, is_file_session_dir, read_file_session
from strands_durable.sdk.pending import tool_uses
from strands_durable.store.fileops import FileOps

RECENT_SECONDS = 60.0
REPAIRING_SUFFIX = ".repairing"


def session_directory(root: Path, session_id: str) -> Path:
    if not session_id or any(sep in session_id for sep in "/\\") or session_id in {".", ".."}:
        raise UsageError(f"Not a session id: {session_id!r} (no path separators)")
    directory = Path(root).expanduser() / f"session_{session_id}"
    if not is_file_session_dir(directory):
        raise SessionNotFound(f"{session_id} (no FileSessionManager session in {directory})")
    return directory


def problems_of(messages: list[dict[str, Any]]) -> list[str]:
    """What a provider would reject in this history, as it is or on the next prompt."""
    found = [f"message {v.message_index}: {v.rule} {v.message}" for v in validate(messages, "bedrock", "stored")]
    if messages:
        last = messages[-1]
        if last.get("role") == "assistant" and tool_uses(last):
            found.append(f"message {len(messages) - 1}: toolUse without its result ends the history")
        elif last.get("role") == "user":
            found.append(
                f"message {len(messages) - 1}: an unanswered prompt ends the history (the next prompt "
                "would put two user messages in a row)"
            )
    return found


def check_file_session(root: Path, session_id: str) -> dict[str, list[str]]:
    """agent id -> problems (empty when the agent's history is fine)."""
    directory = session_directory(root, session_id)
    _finish_swaps(directory)
    return {agent_id: problems_of(data["messages"]) for agent_id, data in read_file_session(directory).items()}


@dataclass
class FileRepair:
    repaired: dict[str, tuple[int, int]] = field(default_factory=dict)  # agent -> (messages before, after)
    backup: Path | None = None


def repair_file_session(
    root: Path, session_id: str, *, force: bool = False, fileops: FileOps | None = None
) -> FileRepair:
    ops = fileops or FileOps()
    directory = session_directory(root, session_id)
    _finish_swaps(directory, ops)
    newest = max((p.stat().st_mtime for p in (directory / "agents").rglob("*") if p.is_file()), default=0.0)
    if not force and time.time() - newest < RECENT_SECONDS:
        raise UsageError(
            f"{directory}: files changed in the last minute (FileSessionManager takes no lock: is a process using "
            "this session?); stop it, or pass --force"
        )
    report = FileRepair()
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    for agent_id, data in read_file_session(directory).items():
        if not problems_of(data["messages"]):
            continue
        messages = importable_history(agent_id, data["messages"])
        agent_dir = directory / "agents" / f"agent_{agent_id}"
        fresh = agent_dir.with_name(agent_dir.name + REPAIRING_SUFFIX)
        if fresh.exists():
            ops.remove_tree(fresh)
        _write_agent_dir(agent_dir, fresh, messages, ops)
        report.backup = directory / "backups" / stamp
        ops.makedirs(report.backup)
        ops.rename(agent_dir, report.backup / agent_dir.name)
        ops.fsync_dir(report.backup)
        ops.rename(fresh, agent_dir)
        ops.fsync_dir(agent_dir.parent)
        report.repaired[agent_id] = (len(data["messages"]), len(messages))
    return report


def _write_agent_dir(old: Path, new: Path, messages: list[dict[str, Any]], ops: FileOps) -> None:
    """The repaired agent directory: agent.json (removed_message_count within the new length) and message files."""
    record = json.loads((old / "agent.json").read_text(encoding="utf-8"))
    cm_state = record.get("conversation_manager_state") or {}
    if "removed_message_count" in cm_state:
        cm_state["removed_message_count"] = min(int(cm_state["removed_message_count"]), len(messages))
    record["updated_at"] = datetime.now(timezone.utc).isoformat()
    ops.makedirs(new / "messages")
    now = datetime.now(timezone.utc).isoformat()
    for index, message in enumerate(messages):
        body = {"message": message, "message_id": index, "redact_message": None, "created_at": now, "updated_at": now}
        ops.write_atomic(new / "messages" / f"message_{index}.json", json.dumps(body, indent=2).encode())
    ops.write_atomic(new / "agent.json", json.dumps(record, indent=2).encode())
    ops.fsync_dir(new)


def _finish_swaps(directory: Path, ops: FileOps | None = None) -> None:
    """Finish a swap a crash cut short: a repaired directory whose agent directory is gone is renamed in; one
    whose agent directory still exists was never swapped and is dropped."""
    ops = ops or FileOps()
    for fresh in (directory / "agents").glob(f"agent_*{REPAIRING_SUFFIX}"):
        target = fresh.with_name(fresh.name[: -len(REPAIRING_SUFFIX)])
        if target.exists():
            ops.remove_tree(fresh)
        else:
            ops.rename(fresh, target)
            ops.fsync_dir(target.parent)
