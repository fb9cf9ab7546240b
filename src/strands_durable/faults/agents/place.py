"""What a run of a Python agent, Graph or Swarm leaves on disk, and what a fresh build finds there: a run's place
(its storage directory and the tools' workspace), copies of it taken at the instant of a crash, the prompts
acknowledged, the conversations, states and tool results stored, and what each call of a Graph or Swarm returned.
faults/agents/engine.py crashes and resumes the runs."""

from __future__ import annotations

import contextlib
import copy
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.faults.agents.run import (
    AgentChaos,
    AgentContext,
    Run,
    agent_of_conversation,
    agents_of,
    build,
    call_key,
    multi_agent,
    session_manager_of,
)
from strands_durable.faults.kit.scratch import reset_dir, write_scratch
from strands_durable.store.fileops import FileOps

_SCRATCH = FileOps()  # the harness's own files (copies, markers): not session data, no fsync


@dataclass(frozen=True)
class Place:
    """A run's storage directory and workspace under one root."""

    root: Path

    @property
    def storage(self) -> Path:
        return self.root / "storage"

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def acknowledged(self) -> Path:
        return self.root / "acknowledged"

    def context(self, chaos: AgentChaos, phase: str) -> AgentContext:
        return AgentContext(self.storage, self.workspace, chaos.session_id, phase)

    def fresh(self) -> Place:
        reset_dir(self.root)
        reset_dir(self.storage)
        reset_dir(self.workspace)
        return self


def copy_tree(src: Path, dst: Path) -> None:
    """`src` copied to a fresh `dst` (harness files, no fsync); a file that vanishes meanwhile is left out."""
    reset_dir(dst)
    for path in sorted(src.rglob("*")):
        target = dst / path.relative_to(src)
        try:
            if path.is_dir():
                _SCRATCH.makedirs(target, durable=False)
            elif path.is_file():
                write_scratch(target, path.read_bytes())
        except FileNotFoundError:
            continue


# -- running the prompts -----------------------------------------------------------------------------------------
def converse(target: Any, prompts: Sequence[str], place: Place, start: int = 0) -> dict[int, Any]:
    """Send the prompts (a Graph's or Swarm's tasks) from `start` on, noting in the place how many returned (what
    a crash acknowledged); what each call of a Graph or Swarm returned, by prompt index (`result_summary`)."""
    results: dict[int, Any] = {}
    for index in range(start, len(prompts)):
        result = target(prompts[index])
        if multi_agent(target):
            results[index] = result_summary(result)
        write_scratch(place.acknowledged, str(index + 1).encode())
    return results


def result_summary(result: Any) -> dict[str, Any]:
    """What a Graph's or Swarm's call returned, as JSON: its status, node order and node results."""
    order = getattr(result, "node_history", None) or getattr(result, "execution_order", [])
    return {
        "status": str(getattr(result, "status", None)),
        "order": [node.node_id for node in order],
        "results": {node_id: str(node.result) for node_id, node in sorted(getattr(result, "results", {}).items())},
    }


def acknowledged(place: Place) -> int:
    """How many prompts were answered before the crash: their `agent(...)` calls returned, or (a Graph or Swarm)
    our manager stored their invocation's end. A task whose end is stored is not sent again: a completed end would
    be returned as stored, a failed one would be a new run of the task (docs/python-agents.md)."""
    returned = int(place.acknowledged.read_text()) if place.acknowledged.exists() else 0
    return max(returned, int(_read(place.root / "ended.json", 0)))


@dataclass
class Found:
    """What a fresh build of the factory finds on a run's place: each agent's conversation as loaded (its window,
    normalised; by agent key: "" for a plain Agent, the node id in a Graph or Swarm), its `agent.state`, and every
    stored conversation (normalised, by conversation key: for our manager the session's conversations, trimmed
    messages and a pending invocation's included; for another, each agent's stored messages)."""

    windows: dict[str, list[dict[str, Any]]]
    states: dict[str, Any]
    stored: dict[str, list[dict[str, Any]]]


def found_on(chaos: AgentChaos, place: Place) -> Found:
    """What a fresh `build_agent` loads from `place`."""
    from strands_durable.history import normalize

    target = build(chaos, place.context(chaos, "load"), None)
    try:
        agents = agents_of(target)
        return Found(
            windows={key: normalize(copy.deepcopy(list(agent.messages))) for key, agent in agents.items()},
            states={key: copy.deepcopy(agent.state.get()) for key, agent in agents.items()},
            stored={key: normalize(messages) for key, messages in stored_conversations(target, agents).items()},
        )
    finally:
        close_agent(target)


def stored_conversations(target: Any, agents: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Every conversation the target's session manager has stored, by conversation key: ours from its store (the
    journal holds a pending invocation's messages and everything a sliding window trimmed); a repository manager's
    (the SDK's `FileSessionManager`) from its repository; else each agent's messages as loaded."""
    manager = session_manager_of(target)
    store, session_id = getattr(manager, "store", None), getattr(manager, "session_id", None)
    if store is not None and callable(getattr(store, "load", None)) and session_id is not None:
        try:
            state = store.load(session_id)
        except Exception:  # nothing stored yet (a crash before the session existed), or unreadable: judged later
            return {}
        return {key: copy.deepcopy(list(conv.messages)) for key, conv in state.conversations.items()}
    repository = getattr(manager, "session_repository", None)
    found = {}
    for key, agent in agents.items():
        messages = copy.deepcopy(list(agent.messages))
        if repository is not None and session_id is not None:
            with contextlib.suppress(Exception):  # a node agent the repository does not store
                messages = [m.to_message() for m in repository.list_messages(session_id, agent.agent_id)]
        found[f"node.{key}" if key else agent.agent_id] = messages
    return found


def journal_results(target: Any) -> dict[str, set[str]]:
    """Our manager's tool-result journal: conversation key -> toolUseIds whose results are committed but not yet in
    a stored results message (nothing for another manager)."""
    manager = session_manager_of(target)
    store, session_id = getattr(manager, "store", None), getattr(manager, "session_id", None)
    if store is None or not callable(getattr(store, "load", None)) or session_id is None:
        return {}
    try:
        state = store.load(session_id)
    except Exception:
        return {}
    return {key: set(conv.tool_results) for key, conv in state.conversations.items()}


SDK_PLACEHOLDER = "Tool was interrupted."  # the SDK's in-memory answer to an orphan toolUse on load (not stored)


@dataclass
class Stored:
    """What the crash left stored: each agent's stored conversations (normalised as requests are; by agent key: a
    node visited afresh has one per visit), how many results of each tool call are stored (by call key), and the
    call keys of the tool bodies that had run to their end before the crash (stored or not)."""

    conversations: dict[str, list[list[dict[str, Any]]]] = field(default_factory=dict)
    results: Counter[str] = field(default_factory=Counter)
    finished: set[str] = field(default_factory=set)


def stored_at_crash(chaos: AgentChaos, crashed: Place) -> Stored:
    """What a fresh build finds in (a copy of) what the crash left, plus the tool results our manager reported
    committed (`tool.committed`) before the crash. The SDK's in-memory "Tool was interrupted." answers are not
    stored and are left out."""
    from strands_durable.models.request import normalise_messages

    stored = Stored(finished=_ids(crashed.root / "finished.json"))
    probe = Place(crashed.root.with_name("probe"))
    copy_tree(crashed.root, probe.root)
    try:
        target = build(chaos, probe.context(chaos, "load"), None)
    except Exception:
        target = None  # judged in the resumes, which load the same state
    if target is not None:
        conversations = stored_conversations(target, agents_of(target))
        pending = journal_results(target)
        close_agent(target)
        for key, messages in conversations.items():
            agent = agent_of_conversation(key)
            ids = set(pending.get(key, ()))
            kept = []
            for message in messages:
                results = [b["toolResult"] for b in message.get("content", ()) if "toolResult" in b]
                real = [r for r in results if SDK_PLACEHOLDER not in json.dumps(r)]
                if results and not real:
                    break  # the SDK's placeholder answers: in memory only, and nothing stored follows them
                ids.update(r["toolUseId"] for r in real)
                kept.append(message)
            stored.conversations.setdefault(agent, []).append(normalise_messages(kept))
            stored.results.update(call_key(agent, i) for i in ids)
    for key in _ids(crashed.root / "committed.json"):  # reported committed, whatever the files show
        stored.results[key] = max(stored.results[key], 1)
    return stored


def note_at_crash(run: Run, place: Place) -> None:
    """Beside what the crash leaves: the tool results our manager reported committed and the tool bodies that had
    run to their end (`stored_at_crash` reads them), and how many Graph or Swarm ends it stored (`acknowledged`)."""
    write_scratch(place.root / "committed.json", json.dumps(sorted(run.committed)).encode())
    write_scratch(place.root / "finished.json", json.dumps(sorted(run.finished)).encode())
    write_scratch(place.root / "ended.json", json.dumps(run.ended).encode())


def _read(path: Path, default: Any) -> Any:
    return json.loads(path.read_text()) if path.exists() else default


def _ids(path: Path) -> set[str]:
    return set(_read(path, []))


def close_agent(target: Any) -> None:
    """Close the session manager of an Agent, Graph or Swarm when it has a `close` (ours releases its lease)."""
    close = getattr(session_manager_of(target), "close", None)
    if callable(close):
        close()
