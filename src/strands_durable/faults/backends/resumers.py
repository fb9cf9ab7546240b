"""The `two-resumers` clause: after a first prompt, two processes forked at once restore the session, meet at a
barrier, each send their own prompt; then a third process loads what is stored. Passed when exactly one of them got
an error and nothing it sent is stored.

A repository or storage runs under the SDK's lease-less manager, where the outcome is decided by which resumer's
first commit of its prompt (`create_message`, or a storage `write`) reaches the backend first and by what the backend
does with the second: the two are driven in lockstep through both orders (`SCHEDULES`: the first commits, the other
commits only then; the first goes on once the other's commit returned or failed, the other once the first ended),
and each order is judged, so a backend's verdict and finding are the same in every run.
A manager is raced freely: after storing its prompt, the first waits for the other to be about to store its own (or
to have been refused), so a slow process does not turn the race into a sequence."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoint
from strands_durable.faults.agents.run import Run
from strands_durable.faults.backends import children, conversation
from strands_durable.faults.backends.children import Place, Setup, read_record
from strands_durable.faults.backends.context import MANAGER
from strands_durable.faults.backends.instrument import CallLog
from strands_durable.faults.backends.pool import Job, run_jobs
from strands_durable.faults.kit.scratch import reset_dir, write_scratch

NAMES = ("A", "B")
# How long a resumer waits for the other at each barrier. Restoring is not expected to block, so the first barrier
# waits long enough for a slow process on a loaded machine: a resumer that gave up early would restore after the
# other stored its prompt, and the two would not race. Once it stored its prompt, a resumer waits as long again
# for the other to be about to store its own (or to have ended: refused at the start of its call), so a slow
# other does not find the session free and turn the race into a sequence; storing a prompt may block on the
# lease this one holds, so the wait for it to be stored gives up soon.
BARRIER_S = {"ready": 20.0, "storing": 20.0, "stored": 3.0, "committed": 20.0, "done": 20.0}
# The first commit of what a resumer sent, per kind: the SDK's manager numbers messages from the last one it
# restored, so both resumers create the same message id (or overwrite the same snapshot) there.
CONTESTED = ("repository/create_message", "storage/write")
SCHEDULES = (("A", "B"), ("B", "A"))  # (whose contested commit goes first, whose then)


def prompt_of(name: str) -> str:
    return f"{conversation.PROMPTS[1]} (resumer {name})"


def _wait_for(place: Place, stage: str, other: str) -> bool:
    """Wait until the other resumer reached `stage` or ended; False when the barrier gave up."""
    deadline = time.monotonic() + BARRIER_S[stage]
    while time.monotonic() < deadline:
        if (place.root / f"{stage}-{other}").exists() or (place.root / f"done-{other}").exists():
            return True
        time.sleep(0.001)
    return False


def _lockstep(place: Place, name: str, order: tuple[str, str], record: dict[str, Any]) -> Any:
    """The crash-point subscriber that orders the two resumers' contested commits as `order` says."""
    first, other = order[0], order[1 - order.index(name)]
    seen = {"before": False, "after": False}

    def at_point(point: CrashPoint) -> None:
        if point.path not in CONTESTED:
            return
        if point.site == "store.before_commit" and not seen["before"]:
            seen["before"] = True
            if name != first and not _wait_for(place, "committed", first):
                record["alone_at"].append("committed")
        elif point.site == "store.after_commit" and not seen["after"]:
            seen["after"] = True
            write_scratch(place.root / f"committed-{name}", b"")
            stage = "committed" if name == first else "done"  # the second goes on once the first has ended
            if not _wait_for(place, stage, other):
                record["alone_at"].append(stage)

    return at_point


def _resumer(setup: Setup, place: Place, name: str, order: tuple[str, str] | None = None) -> int:
    other = NAMES[1 - NAMES.index(name)]
    record: dict[str, Any] = {"name": name, "alone_at": []}
    met = [False]

    def at_point(point: CrashPoint) -> None:
        if not met[0] and point.path in ("hook/message:user:first", "hook/message:user:last"):
            write_scratch(place.root / f"storing-{name}", b"")  # (no point before: a manager without the event)
        if not met[0] and point.path == "hook/message:user:last":
            met[0] = True
            write_scratch(place.root / f"stored-{name}", b"")
            for stage in ("storing", "stored"):
                if not _wait_for(place, stage, other):
                    record["alone_at"].append(stage)
                    break

    try:
        with Run() as run:
            run.bus.subscribe(at_point if order is None else _lockstep(place, name, order, record))
            agent = children.build_agent(setup, place, run, CallLog(), f"resumer:{name}")
            write_scratch(place.root / f"ready-{name}", b"")
            if not _wait_for(place, "ready", other):
                record["alone_at"].append("ready")
            agent(prompt_of(name))
            children.close_agent(agent)
        record["ok"] = True
    except Exception as exc:
        record["ok"] = False
        record["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    write_scratch(place.root / f"resumer-{name}.json", json.dumps(record).encode())
    write_scratch(place.root / f"done-{name}", b"")
    return 0


def _first_prompt(setup: Setup, place: Place) -> int:
    with Run() as run:
        agent = children.build_agent(setup, place, run, CallLog(), "before")
        agent(conversation.PROMPTS[0])
        children.close_agent(agent)
    return 0


def _load(setup: Setup, place: Place) -> int:
    write_scratch(place.root / children.RECORD, json.dumps(children.load_stored(setup, place)).encode())
    return 0


def race(setup: Setup, root: Path, *, limit_s: float) -> list[str]:
    """The problems of two resumers racing on one session (empty: the clause passed): a manager raced once, a
    repository or storage once per order of the contested commits (each problem says which order)."""
    if setup.kind == MANAGER:
        return _race_once(setup, Place(root / "resumers", "gate-resumers"), None, limit_s=limit_s)
    problems = []
    for order in SCHEDULES:
        place = Place(root / "resumers" / f"{order[0]}-first", "gate-resumers")
        found = _race_once(setup, place, order, limit_s=limit_s)
        problems += [f"{order[0]} committed first, {order[1]} then: {problem}" for problem in found]
    return problems


def _race_once(setup: Setup, place: Place, order: tuple[str, str] | None, *, limit_s: float) -> list[str]:
    reset_dir(place.root)
    first = Job("first prompt", [lambda: lambda: _first_prompt(setup, place)])
    run_jobs([first], workers=1, limit_s=limit_s)
    if first.overran or first.exits[0].code != 0:
        return [f"the first prompt failed before the race ({first.exits[0].describe()})"]
    racers = [Job(name, [lambda name=name: lambda: _resumer(setup, place, name, order)]) for name in NAMES]
    run_jobs(racers, workers=2, limit_s=limit_s)
    loading = Job("load", [lambda: lambda: _load(setup, place)])
    run_jobs([loading], workers=1, limit_s=limit_s)
    outcomes = {name: _read(place.root / f"resumer-{name}.json") for name in NAMES}
    stored = read_record(place) or {"error": "the session could not be loaded"}
    return judge(outcomes, stored)


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {"ok": False, "error": "the resumer died"}


def judge(outcomes: dict[str, dict[str, Any]], stored: dict[str, Any]) -> list[str]:
    problems = _judge(outcomes, stored)
    alone = [f"{n} at {stage}" for n in NAMES for stage in outcomes[n].get("alone_at", ())]
    if problems and alone:
        problems[0] += f" (a barrier gave up waiting: {', '.join(alone)})"
    return problems


def _judge(outcomes: dict[str, dict[str, Any]], stored: dict[str, Any]) -> list[str]:
    if "error" in stored:
        return [f"after the race: {stored['error']}"]
    texts = json.dumps(stored["stored_raw"])
    kept = [name for name in NAMES if prompt_of(name) in texts]
    won = [name for name in NAMES if outcomes[name]["ok"]]
    if len(won) == 2:
        return [f"both resumers returned without an error (the session forked silently); stored: {kept or 'neither'}"]
    if not won:
        errors = "; ".join(f"{n}: {outcomes[n].get('error')}" for n in NAMES)
        return [f"both resumers failed ({errors})"]
    loser = NAMES[1 - NAMES.index(won[0])]
    if loser in kept:
        return [f"resumer {loser} got an error ({outcomes[loser].get('error')}) but its prompt is stored"]
    if won[0] not in kept:
        return [f"resumer {won[0]} returned but its prompt is not stored"]
    return []
