"""What a run of a Python agent leaves on disk, and what a fresh agent finds there: a run's place (its storage
directory and the tools' workspace), copies of it taken at the instant of a crash, the prompts acknowledged, and the
messages and tool results stored when it crashed. faults/agents/engine.py crashes and resumes the runs."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.faults.agents.run import AgentChaos, AgentContext, Run, build
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
def converse(agent: Any, prompts: Sequence[str], place: Place, start: int = 0) -> None:
    """Send the prompts from `start` on, noting in the place how many returned (what a crash acknowledged)."""
    for index in range(start, len(prompts)):
        agent(prompts[index])
        write_scratch(place.acknowledged, str(index + 1).encode())


def acknowledged(place: Place) -> int:
    """How many prompts' `agent(...)` calls returned before the crash."""
    return int(place.acknowledged.read_text()) if place.acknowledged.exists() else 0


def load_messages(chaos: AgentChaos, place: Place) -> list[dict[str, Any]]:
    """The conversation as a fresh `build_agent` loads it from `place`."""
    agent = build(chaos, place.context(chaos, "load"), None)
    messages = copy.deepcopy(list(agent.messages))
    close_agent(agent)
    return messages


def load_history(chaos: AgentChaos, place: Place) -> list[dict[str, Any]]:
    """The conversation as a fresh `build_agent` loads it from `place`, normalised."""
    from strands_durable.history import normalize

    return normalize(load_messages(chaos, place))


SDK_PLACEHOLDER = "Tool was interrupted."  # the SDK's in-memory answer to an orphan toolUse on load (not stored)


@dataclass
class Stored:
    """What the crash left stored: the messages (a pending invocation's too, for our manager) and the toolUseIds
    whose results are stored; and the toolUseIds of the tool bodies that had run to their end before the crash
    (stored or not)."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    results: set[str] = field(default_factory=set)
    finished: set[str] = field(default_factory=set)


def stored_at_crash(chaos: AgentChaos, crashed: Place) -> Stored:
    """What a fresh agent finds in (a copy of) what the crash left, plus the tool results our manager reported
    committed (`tool.committed`) before the crash. The SDK's in-memory "Tool was interrupted." answers are not
    stored and are left out."""
    from strands_durable.models.request import normalise_messages

    stored = Stored(results=_ids(crashed.root / "committed.json"), finished=_ids(crashed.root / "finished.json"))
    probe = Place(crashed.root.with_name("probe"))
    copy_tree(crashed.root, probe.root)
    try:
        agent = build(chaos, probe.context(chaos, "load"), None)
    except Exception:
        return stored  # judged in the resumes, which load the same state
    messages = copy.deepcopy(list(agent.messages))
    store = getattr(getattr(agent, "_session_manager", None), "store", None)
    if store is not None:  # our manager: the journal also holds the pending invocation's messages
        with contextlib.suppress(Exception):
            conv = store.load(chaos.session_id).conversations.get(agent.agent_id)
            messages = copy.deepcopy(list(conv.messages)) if conv is not None else messages
    close_agent(agent)
    for message in messages:
        results = [b["toolResult"] for b in message.get("content", ()) if "toolResult" in b]
        real = [r for r in results if SDK_PLACEHOLDER not in json.dumps(r)]
        if results and not real:
            break  # the SDK's placeholder answers: in memory only, and nothing stored follows them
        stored.results.update(r["toolUseId"] for r in real)
        stored.messages.append(message)
    stored.messages = normalise_messages(stored.messages)
    return stored


def note_at_crash(run: Run, place: Place) -> None:
    """Beside what the crash leaves: the tool results our manager reported committed and the tool bodies that had
    run to their end (`stored_at_crash` reads them)."""
    write_scratch(place.root / "committed.json", json.dumps(sorted(run.committed)).encode())
    write_scratch(place.root / "finished.json", json.dumps(sorted(run.finished)).encode())


def _ids(path: Path) -> set[str]:
    return set(json.loads(path.read_text())) if path.exists() else set()


def close_agent(agent: Any) -> None:
    """Close the agent's session manager when it has a `close` (ours releases its lease)."""
    close = getattr(getattr(agent, "_session_manager", None), "close", None)
    if callable(close):
        close()
