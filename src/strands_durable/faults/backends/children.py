"""The runs the gate makes, each in a child forked from the warm parent (which never calls the factory, so no
connection or thread of the backend's exists at a fork): the golden run, a run SIGKILLed at one crash point, a
resume in one of the two styles a user would, and a run that only loads the session. Each leaves a JSON record
in its directory for the parent to judge (`Record`)."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoints, ToolCall
from strands_durable.faults.agents.engine import answered, pending
from strands_durable.faults.agents.run import Run
from strands_durable.faults.backends import conversation
from strands_durable.faults.backends.context import MANAGER, REPOSITORY, BackendFactory, GateContext
from strands_durable.faults.backends.instrument import (
    REPOSITORY_METHODS,
    CallLog,
    CallProxy,
    bracket_hooks,
    handled_events,
    proxy_manager,
)
from strands_durable.faults.kit.golden import dump_points
from strands_durable.faults.kit.scratch import write_scratch

RECORD = "record.json"
KILLED_IN_FACTORY = {"fired": True, "acknowledged": 0, "durable": [], "committed": []}


@dataclass(frozen=True)
class Setup:
    """What every child needs: the factory, the kind it returns, the gate's prefix."""

    factory: BackendFactory
    kind: str
    prefix: str


@dataclass(frozen=True)
class Place:
    """One run's directory: the backend's scratch directory (`ctx.directory`), the tools' workspace, the record."""

    root: Path
    session_id: str

    @property
    def backend(self) -> Path:
        return self.root / "backend"

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    def context(self, setup: Setup) -> GateContext:
        return GateContext(self.session_id, self.backend, setup.prefix)


FACTORY_KILL_AFTER: list[float] = [0.0]  # in a child killed inside the factory call: after how many seconds
FACTORY_SECONDS: list[float] = [0.0]  # how long the last factory call took (the golden run's is recorded)


@contextlib.contextmanager
def killed_after(seconds: float) -> Iterator[None]:
    """SIGKILL this process `seconds` from now unless the block ends first (no thread needed: a timer signal)."""
    if seconds <= 0:
        yield
        return
    signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGKILL))
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def session_manager(setup: Setup, ctx: GateContext, bus: Any, log: CallLog) -> Any:
    """The factory's backend as a session manager, its repository or storage behind the proxy: a manager as
    returned, a repository under the SDK's `RepositorySessionManager`, a storage under its `SnapshotSessionManager`
    saving at every message (the strongest save the SDK offers). Session creation happens here: a child killed
    inside the factory call is killed in this function (`FACTORY_KILL_AFTER`)."""
    started = time.monotonic()
    with killed_after(FACTORY_KILL_AFTER[0]):
        manager = _session_manager(setup, ctx, bus, log)
    FACTORY_SECONDS[0] = time.monotonic() - started
    return manager


def _session_manager(setup: Setup, ctx: GateContext, bus: Any, log: CallLog) -> Any:
    backend = setup.factory(ctx)
    if setup.kind == MANAGER:
        proxy_manager(backend, bus, log)
        return backend
    if setup.kind == REPOSITORY:
        from strands.session.repository_session_manager import RepositorySessionManager

        return RepositorySessionManager(ctx.session_id, CallProxy(backend, REPOSITORY_METHODS, bus, log, "repository"))
    from strands.session.snapshot_session_manager import SnapshotSessionManager

    manager = SnapshotSessionManager(ctx.session_id, storage=backend, save_latest_on="message")
    proxy_manager(manager, bus, log)
    return manager


def build_agent(setup: Setup, place: Place, run: Run, log: CallLog, phase: str) -> Any:
    from strands_durable.faults.agents.run import _counting

    manager = session_manager(setup, place.context(setup), run.bus, log)
    if isinstance(getattr(manager, "crash_points", None), CrashPoints):
        manager.crash_points = committed_results(run)  # ours: which tool results it committed, not more points
    agent = conversation.agent(manager, place.workspace, phase)
    agent.hooks.add_hook(bracket_hooks(run.bus, log, handled_events(manager)))
    agent.model = _counting(agent.model, run)
    return agent


def committed_results(run: Run) -> CrashPoints:
    """A bus on which a manager of ours reports the tool results it committed (`tool.committed`) into `run`."""
    bus = CrashPoints()
    bus.subscribe(ToolCall, lambda p: run.committed.add(p.tool_use_id) if p.site == "tool.committed" else None)
    return bus


def plain(messages: list[Any]) -> list[dict[str, Any]]:
    """Messages as plain, normalised JSON (toolUseIds renamed in order, tracking ids and metadata dropped)."""
    from strands_durable.history import normalize
    from strands_durable.models.request import normalise_messages

    return normalize(normalise_messages(copy.deepcopy(list(messages))))


def raw(messages: list[Any]) -> list[dict[str, Any]]:
    """Messages as plain JSON, toolUseIds kept (to match the tools' notes)."""
    from strands_durable.models.request import normalise_messages

    return normalise_messages(copy.deepcopy(list(messages)))


def stored_view(agent: Any) -> list[Any]:
    """The messages a fresh agent restored; for a manager of ours, which keeps an interrupted invocation's messages
    in its journal until `agent()` or the re-sent prompt finishes it, the journal's view (faults/agents/place.py
    reads it the same way)."""
    manager = getattr(agent, "_session_manager", None)
    store = getattr(manager, "store", None)
    if store is None or not callable(getattr(manager, "pending_prompt", None)):
        return list(agent.messages)
    from strands_durable.errors import SessionNotFound

    try:
        conv = store.load(manager.session_id).conversations.get(agent.agent_id)
    except SessionNotFound:  # killed before the session's first commit
        return list(agent.messages)
    return list(conv.messages) if conv is not None else list(agent.messages)


def close_agent(agent: Any) -> None:
    close = getattr(getattr(agent, "_session_manager", None), "close", None)
    if callable(close):
        close()


# -- the golden run ---------------------------------------------------------------------------------------------
def golden(setup: Setup, place: Place) -> int:
    """The three prompts without a fault: the crash points passed, the history after each prompt, the calls, how
    long the factory call took (with the session's creation)."""
    log = CallLog()
    with Run() as run:
        agent = build_agent(setup, place, run, log, "golden")
        factory_seconds = FACTORY_SECONDS[0]
        ends = [0]
        for prompt in conversation.PROMPTS:
            agent(prompt)
            ends.append(len(agent.messages))
        history = plain(agent.messages)
        close_agent(agent)
    record = {
        "points": json.loads(dump_points(run.points)),
        "history": history,
        "ends": ends,
        "invalid": [r.invalid for r in run.requests if r.invalid],
        "calls": log.calls,
        "created": log.created,
        "factory_seconds": factory_seconds,
    }
    write_scratch(place.root / RECORD, json.dumps(record).encode())
    return 0


# -- a run killed at one point ------------------------------------------------------------------------------------
def crashing(setup: Setup, place: Place, point_id: str, factory_kill: float = 0.0) -> int:
    """The prompts until the point `point_id`, where the process SIGKILLs itself after noting what it had: how many
    prompts returned, the messages whose MessageAddedEvent had returned, the tool results our manager committed.
    With `factory_kill`, killed that many seconds into the factory call instead (if it has not returned)."""
    log = CallLog()
    if factory_kill:
        write_scratch(place.root / RECORD, json.dumps(KILLED_IN_FACTORY).encode())
        FACTORY_KILL_AFTER[0] = factory_kill
        with Run() as run:
            build_agent(setup, place, run, log, "crash")
        write_scratch(place.root / RECORD, json.dumps({"fired": False, "factory_returned": True}).encode())
        return 0
    acknowledged = [0]
    holder: list[Any] = []

    def at_crash() -> None:
        messages = list(holder[0].messages) if holder else []
        record = {
            "fired": True,
            "acknowledged": acknowledged[0],
            "durable": plain(messages[: log.durable_messages]),
            "committed": sorted(run.committed),
        }
        write_scratch(place.root / RECORD, json.dumps(record).encode())

    run = Run(point_id, kill=True, at_crash=at_crash)
    with run:
        holder.append(build_agent(setup, place, run, log, "crash"))
        for prompt in conversation.PROMPTS:
            holder[0](prompt)
            acknowledged[0] += 1
    write_scratch(place.root / RECORD, json.dumps({"fired": False, "acknowledged": acknowledged[0]}).encode())
    return 0


# -- a resume ---------------------------------------------------------------------------------------------------
def resuming(setup: Setup, place: Place, style: str, start: int) -> int:
    """A user after the crash: a fresh agent, the interrupted prompt finished by `agent()` when something is
    pending (style `agent()`) or re-sent (unless the history already holds its answer), then the rest; then the
    session loaded by another fresh agent."""
    log = CallLog()
    record: dict[str, Any] = {"style": style}
    with Run() as run:
        try:
            agent = build_agent(setup, place, run, log, f"resume:{style}")
            restored = stored_view(agent)
            record["restored"] = plain(restored)
            record["restored_raw"] = raw(restored)
            record["listed"] = sorted(set(log.listed))
            if start < len(conversation.PROMPTS):
                interrupted = conversation.PROMPTS[start]
                record["pending"] = pending(agent)
                if style == "agent()" and record["pending"]:
                    agent()
                elif not answered(agent.messages, interrupted):
                    agent(interrupted)
                for prompt in conversation.PROMPTS[start + 1 :]:
                    agent(prompt)
            close_agent(agent)
        except Exception as exc:
            record["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    record["invalid"] = [r.invalid[0] for r in run.requests if r.invalid]
    record["created"] = log.created
    if "error" not in record:
        record.update(load_stored(setup, place))
    write_scratch(place.root / RECORD, json.dumps(record).encode())
    return 0


def load_stored(setup: Setup, place: Place) -> dict[str, Any]:
    """The session as a fresh agent loads it: its messages (plain and with their toolUseIds)."""
    log = CallLog()
    try:
        with Run() as run:
            agent = build_agent(setup, place, run, log, "load")
            stored = {"stored": plain(agent.messages), "stored_raw": raw(agent.messages), "stored_ids": log.listed}
            close_agent(agent)
            return stored
    except Exception as exc:
        return {"error": f"the session does not load after the resume: {type(exc).__name__}: {exc}"}


def read_record(place: Place) -> dict[str, Any] | None:
    path = place.root / RECORD
    return json.loads(path.read_text()) if path.exists() else None
