"""Import a `FileSessionManager` directory of the same id into a durable session, on first open.

Both managers name a session's directory `session_<id>`; ours holds a journal, the SDK's does not. The SDK's
files are read (each agent's messages, state, conversation-manager and internal state), a history a provider
would reject is repaired (an interrupted last turn is closed as `agent(q)` closes one), the whole is committed as
one journal record, and the SDK's files are kept under `backups/<stamp>-file-session-manager/`, never overwritten.
A crash midway is finished by the next open (the SDK's directory is first renamed aside, atomically).
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from strands_durable.errors import CorruptSession
from strands_durable.history import repair
from strands_durable.sdk import pending as invocations
from strands_durable.store import LocalStore, events
from strands_durable.store.state import Conversation

logger = logging.getLogger("strands_durable.sdk")
ASIDE_SUFFIX = ".file-session-manager"
SDK_SESSION_PREFIX = "session_"  # FileSessionManager's directory naming (`session_<id>`, the same as ours)
BACKUPS = "backups"  # the session's folder of old files, never read as data
IMPORT_UNIT = "import"


def is_file_session_dir(directory: Path) -> bool:
    """A FileSessionManager session directory: its session.json names a session type (ours never does)."""
    try:
        data = json.loads((directory / "session.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "session_type" in data


def read_file_session(directory: Path) -> dict[str, dict[str, Any]]:
    """agent id -> {"messages", "state", "cm_state", "internal_state"} from a FileSessionManager directory."""
    agents: dict[str, dict[str, Any]] = {}
    for agent_dir in sorted((directory / "agents").glob("agent_*")):
        agent_id = agent_dir.name[len("agent_") :]
        try:
            record = json.loads((agent_dir / "agent.json").read_text(encoding="utf-8"))
            files = sorted((agent_dir / "messages").glob("message_*.json"), key=lambda p: int(p.stem.split("_")[1]))
            messages = []
            for path in files:
                data = json.loads(path.read_text(encoding="utf-8"))
                messages.append(data.get("redact_message") or data["message"])
        except (OSError, ValueError, KeyError) as exc:
            raise CorruptSession(str(agent_dir), f"cannot read the FileSessionManager files: {exc}") from exc
        agents[agent_id] = {
            "messages": [{k: v for k, v in m.items() if k != "tracking_id"} for m in messages],
            "state": record.get("state") or {},
            "cm_state": record.get("conversation_manager_state") or None,
            "internal_state": record.get("_internal_state") or {},
        }
    return agents


def importable_history(agent_id: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history repaired for storage, its interrupted last turn (if any) closed, so it can be continued."""
    repaired, actions = repair(messages)
    if actions:
        logger.info("agent %s: the imported history was repaired (%d changes)", agent_id, len(actions))
    if repaired and not (repaired[-1].get("role") == "assistant" and not invocations.tool_uses(repaired[-1])):
        conv = Conversation(key=agent_id, agent=agent_id, messages=repaired)
        repaired = repaired + invocations.closing_messages(conv, invocations.Pending(IMPORT_UNIT, 0))
    return repaired


def import_file_session(store: LocalStore, session_id: str, meta: dict[str, Any]) -> bool:
    """Import `<root>/session_<id>` when it is a FileSessionManager directory; False when there is none."""
    directory = store.root / f"{SDK_SESSION_PREFIX}{session_id}"
    aside = directory.with_name(directory.name + ASIDE_SUFFIX)
    ops = store.fileops
    if not aside.exists():
        if not is_file_session_dir(directory):
            return False
        ops.rename(directory, aside)
        ops.fsync_dir(store.root)
    elif directory.exists() and session_id not in store.session_ids():
        ops.remove_tree(directory)  # a create the crash cut short
    agents = read_file_session(aside)
    created = session_id in store.session_ids()
    session = store.open(session_id) if created else store.create(meta, b"")
    try:
        if not session.state.conversations:
            imported: list[dict[str, Any]] = []
            for agent_id, data in agents.items():
                for index, message in enumerate(importable_history(agent_id, data["messages"])):
                    imported.append(events.message(agent_id, agent_id, index, message, unit=IMPORT_UNIT))
                imported.append(
                    events.conversation(
                        agent_id,
                        agent_id,
                        agent_state=data["state"],
                        cm_state=data["cm_state"],
                        internal_state=data["internal_state"],
                    )
                )
            imported.append(events.status("idle"))
            session.commit(imported, path="import")
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        target = directory / BACKUPS
        ops.makedirs(target)
        ops.rename(aside, target / f"{stamp}-file-session-manager")
        ops.fsync_dir(target)
        ops.fsync_dir(store.root)
    finally:
        session.close()
    logger.info(
        "session %s: imported the FileSessionManager files (%d agents); the originals are under %s",
        session_id,
        len(agents),
        target,
    )
    return True
