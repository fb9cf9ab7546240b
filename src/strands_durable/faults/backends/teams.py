"""The `nodes-not-rerun` clause: a Graph (plan -> record -> review) and a Swarm (triage hands off to a recorder,
which hands off to a reviewer), each on the backend as its orchestrator's session manager, killed at every crash
point of its golden run (each node event before and after the manager's callbacks, each backend call) and called
again with the same task unless the call had returned. A node whose AfterNodeCallEvent had returned before the kill
must not run again. The scripts are the multi-agent harness's (faults/agents/multiagent.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from strands_durable.faults.agents.multiagent import GRAPH_SCRIPTS, SWARM_SCRIPTS, TASK
from strands_durable.faults.agents.run import Run
from strands_durable.faults.backends import conversation
from strands_durable.faults.backends.children import RECORD, Place, Setup, read_record, session_manager
from strands_durable.faults.backends.instrument import AFTER_ALL, CallLog, bracket_hooks, handled_events
from strands_durable.faults.backends.pool import Job, run_jobs
from strands_durable.faults.kit.golden import dump_points
from strands_durable.faults.kit.scratch import reset_dir, write_scratch
from strands_durable.store.fileops import FileOps

TEAMS = ("graph", "swarm")

_ops = FileOps()  # the harness's own files (records of the children)


def _node_notes(place: Place, phase: str) -> Any:
    """A HookProvider noting, in the workspace, each node's completion (after every other AfterNodeCallEvent
    callback, the kill's point included)."""
    from strands.hooks import AfterNodeCallEvent, HookProvider

    class NodeNotes(HookProvider):
        def register_hooks(self, registry: Any, **kwargs: Any) -> None:
            registry.add_callback(
                AfterNodeCallEvent,
                lambda e: conversation.note(place.workspace, {"node": e.node_id, "event": "completed", "phase": phase}),
                order=AFTER_ALL + 1,
            )

    return NodeNotes()


def _started(place: Place, name: str, phase: str) -> Any:
    """A node agent's hook noting each invocation (the node ran)."""
    from strands.hooks import BeforeInvocationEvent, HookProvider

    class Started(HookProvider):
        def register_hooks(self, registry: Any, **kwargs: Any) -> None:
            registry.add_callback(
                BeforeInvocationEvent,
                lambda e: conversation.note(place.workspace, {"node": name, "event": "started", "phase": phase}),
            )

    return Started()


def build(team: str, setup: Setup, place: Place, run: Run, phase: str) -> Any:
    """The team's orchestrator on the backend, with the bracket hooks and the node notes."""
    from strands import Agent

    from strands_durable.models.scripted import ScriptedModel

    conversation.CURRENT.workspace, conversation.CURRENT.phase = place.workspace, phase
    reset_dir(place.workspace) if not place.workspace.exists() else None
    manager = session_manager(setup, place.context(setup), run.bus, CallLog())
    hooks = [bracket_hooks(run.bus, CallLog(), handled_events(manager)), _node_notes(place, phase)]
    scripts = GRAPH_SCRIPTS if team == "graph" else SWARM_SCRIPTS
    agents = {
        name: Agent(
            name=name,
            model=ScriptedModel(script),
            tools=conversation.tools(),
            callback_handler=None,
            hooks=[_started(place, name, phase)],
        )
        for name, script in scripts.items()
    }
    if team == "swarm":
        from strands.multiagent import Swarm

        return Swarm(list(agents.values()), session_manager=manager, hooks=hooks, max_handoffs=20)
    from strands.multiagent import GraphBuilder

    builder = GraphBuilder()
    for name, agent in agents.items():
        builder.add_node(agent, name)
    builder.add_edge("plan", "record")
    builder.add_edge("record", "review")
    builder.set_entry_point("plan")
    builder.set_max_node_executions(10)
    builder.set_session_manager(manager)
    builder.set_hook_providers(hooks)
    return builder.build()


def golden(team: str, setup: Setup, place: Place) -> int:
    with Run() as run:
        build(team, setup, place, run, "golden")(TASK)
    write_scratch(place.root / RECORD, json.dumps({"points": json.loads(dump_points(run.points))}).encode())
    return 0


def crashing(team: str, setup: Setup, place: Place, point_id: str) -> int:
    run = Run(point_id, kill=True, at_crash=lambda: write_scratch(place.root / RECORD, b'{"fired": true}'))
    with run:
        build(team, setup, place, run, "crash")(TASK)
    write_scratch(place.root / RECORD, json.dumps({"fired": False, "returned": True}).encode())
    return 0


def resuming(team: str, setup: Setup, place: Place) -> int:
    record: dict[str, Any] = {}
    try:
        with Run() as run:
            build(team, setup, place, run, "resume")(TASK)
    except Exception as exc:
        record["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    write_scratch(place.root / RECORD, json.dumps(record).encode())
    return 0


def team_point(team: str, point: str) -> str:
    """A team's crash point as `--point` takes it: `graph:<point id>` or `swarm:<point id>`."""
    return f"{team}:{point}"


def explore_teams(
    setup: Setup,
    root: Path,
    *,
    workers: int,
    limit_s: float,
    every: int = 1,
    points: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Both teams at every (`every`-th) point, or only at the given `team:point` ids: clause -> problems, the first
    point (as `--point` takes it) where each clause failed, and the points explored."""
    from strands_durable.faults.backends.explore import point_ids

    problems: dict[str, list[str]] = {}
    where: dict[str, str] = {}
    explored = 0
    for team in TEAMS:
        if points is not None and not any(p.startswith(f"{team}:") for p in points):
            continue
        place = Place(root / f"{team}-golden", f"gate-{team}-golden")
        reset_dir(place.root)
        job = Job("golden", [lambda place=place, team=team: lambda: golden(team, setup, place)])
        run_jobs([job], workers=1, limit_s=limit_s)
        found = read_record(place)
        if found is None:
            problems.setdefault("nodes-not-rerun", []).append(f"the {team} does not run on the backend without faults")
            continue
        passed = point_ids(found["points"])
        given = [p for p in passed if points is not None and team_point(team, p) in points]
        chosen = passed[:: max(1, every)] if points is None else given
        places = []
        jobs = []
        for index, point in enumerate(chosen):
            at = Place(root / f"{team}-{index}", f"gate-{team}-{index}")
            reset_dir(at.root)
            places.append((point, at))
            jobs.append(Job(point, _steps(team, setup, at, point)))
        run_jobs(jobs, workers=workers, limit_s=limit_s)
        explored += len(chosen)
        for (point, at), job in zip(places, jobs, strict=True):
            for clause, detail in judge(at, job):
                problems.setdefault(clause, []).append(f"{team}: kill at {point}: {detail}")
                where.setdefault(clause, team_point(team, point))
    return {"problems": problems, "where": where, "explored": explored}


def _steps(team: str, setup: Setup, place: Place, point: str) -> list[Any]:
    def crash() -> Any:
        return lambda: crashing(team, setup, place, point)

    def resume() -> Any:
        record = read_record(place)
        if record is None or not record.get("fired"):
            return None
        _ops.rename(place.root / RECORD, place.root / "crash.json")
        return lambda: resuming(team, setup, place)

    return [crash, resume]


def judge(place: Place, job: Job) -> list[tuple[str, str]]:
    found = [
        ("liveness", f"the {('killed run', 'resume')[i]} did not end within the per-run limit") for i in job.overran
    ]
    crash = read_record(Place(place.root, "")) if not (place.root / "crash.json").exists() else None
    if crash is not None and not crash.get("fired"):
        return found + ([] if job.overran else [("liveness", "the killed run never reached this point")])
    resumed = read_record(place)
    if resumed is None:
        return found
    if "error" in resumed:
        return [*found, ("valid-history", f"calling it again failed: {resumed['error']}")]
    notes = conversation.executions(place.workspace)
    completed = {n["node"] for n in notes if n.get("event") == "completed" and n["phase"] == "crash"}
    again = sorted({n["node"] for n in notes if n.get("event") == "started" and n["phase"] == "resume"} & completed)
    return found + [("nodes-not-rerun", f"node {node} completed before the kill and ran again") for node in again[:1]]
