"""Concurrent resumers (F5): real processes racing on one session, and a holder killed mid-run.

`race`: a session is left crashed a third of the way in; `resumers` children wait on one pipe and resume it
the moment the parent closes the pipe. Exactly one proceeds (exit 0); every other one exits 17 (`Session ... is
in use by pid P`), or 2 if it arrived after the winner had completed. `takeover`: a holder resumes with model
latency; a second resumer started while it lives exits 17; the holder is SIGKILLed mid-run and a third resumer
takes the session over (the kernel dropped the holder's flock) and completes it. `lockstep`
(faults/classes/lockstep.py): for every commit of a resume, a first resumer stopped right after it while a second
runs, then the first goes on.
In all, the result equals the golden run and the fsynced tool ledger shows that nothing committed ran twice.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoint, CrashPoints
from strands_durable.errors import ExitCode
from strands_durable.faults.kit import judge
from strands_durable.faults.kit.findings import FaultClass, FaultRun
from strands_durable.faults.kit.forking import ChildExit, fork_child, run_in_child, wait_child
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.ledger import ToolLedger
from strands_durable.faults.kit.observe import run_options
from strands_durable.faults.kit.runs import crashing_run, run_golden
from strands_durable.faults.kit.scratch import reset_dir, write_scratch
from strands_durable.faults.kit.stores import mark_death, store_at
from strands_durable.faults.kit.target import ChaosTarget

FAULT = "concurrent"
DEFAULT_LATENCY_MS = 20
StoreFactory = Callable[[Path], Any]  # sessions root -> SessionStore (a deliberately broken one in tests)


def _resume_child(
    target: ChaosTarget,
    sessions: Path,
    out_dir: Path,
    ledger: ToolLedger,
    store_factory: StoreFactory,
    *,
    gate: int | None = None,
    marker: Path | None = None,
) -> int:
    """A resumer: waits for the gate (a pipe the parent closes), resumes, writes `marker` at its first tool and
    then holds there (the lease held) until it is killed, so a second resumer always meets a live holder however
    slowly a loaded machine starts it (60 s at most, then it goes on)."""
    from strands_durable.runner.run import resume

    if gate is not None:
        os.read(gate, 1)  # returns when every writer closed the pipe
    bus = CrashPoints()
    ledger.subscribe(bus)
    if marker is not None:

        def mark(point: CrashPoint) -> None:
            if point.site == "tool.before" and not marker.exists():
                write_scratch(marker, point.id.encode())
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:  # the parent kills the holder here once the second has tried
                    time.sleep(0.01)

        bus.subscribe(mark)
    scratch = out_dir.parent / "workspace"  # every resumer works on the session's one copy of the tools' workspace
    resume(target.session_id, run_options(target, out_dir, bus, scratch_dir=scratch), store=store_factory(sessions))
    return 0


def explore_concurrent(
    target: ChaosTarget,
    workdir: Path,
    *,
    resumers: int = 3,
    rounds: int = 1,
    latency_ms: int = DEFAULT_LATENCY_MS,
    store_factory: StoreFactory = store_at,
    golden: WorkflowGoldenRun | None = None,
    run: FaultRun | None = None,
    lockstep: bool = False,
    lockstep_commits: int | None = None,
) -> FaultRun:
    """`rounds` races of `resumers` processes and `rounds` takeovers, each judged against the golden run; with
    `lockstep`, also two resumers in lockstep at every commit of the resume (at most `lockstep_commits`,
    faults/classes/lockstep.py)."""
    run = run or FaultRun(FAULT, target.name)
    golden = (golden or run_golden(target, workdir / "golden")).require_completed()
    for number in range(rounds):
        crash_at = golden.point_ids[(number + 1) * len(golden.point_ids) // (rounds + 2)]
        if lockstep:
            from strands_durable.faults.classes.lockstep import lockstep as in_lockstep

            in_lockstep(
                golden,
                crash_at,
                workdir / "lockstep",
                run,
                crashed_session=_crashed_session,
                judge_finished=_judge,
                store_factory=store_factory,
                max_commits=lockstep_commits,
            )
        race(
            golden,
            crash_at,
            workdir / "concurrent",
            run,
            resumers=resumers,
            latency_ms=latency_ms,
            store_factory=store_factory,
        )
        takeover(golden, crash_at, workdir / "concurrent", run, latency_ms=latency_ms, store_factory=store_factory)
    return run


def _crashed_session(golden: WorkflowGoldenRun, crash_at: str, workspace: Path) -> tuple[Path, Path, ToolLedger]:
    """A session killed at `crash_at` in `workspace` (sessions/, out/, and workspace/: its tools' workspace)."""
    reset_dir(workspace)
    sessions, out_dir, ledger = workspace / "sessions", workspace / "out", ToolLedger(workspace / "tools.log")
    scratch = golden.seed_workspace(workspace / "workspace")
    ended = run_in_child(
        lambda: crashing_run(golden.target, sessions, out_dir, ledger, crash_at, signal.SIGKILL, scratch=scratch)
    )
    if ended != ChildExit(None, signal.SIGKILL):
        raise RuntimeError(f"setting up a crashed session at {crash_at} failed: {ended.describe()}")
    mark_death(sessions)
    return sessions, out_dir, ledger


def race(
    golden: WorkflowGoldenRun,
    crash_at: str,
    workspace: Path,
    run: FaultRun,
    *,
    resumers: int,
    latency_ms: int,
    store_factory: StoreFactory = store_at,
) -> None:
    sessions, out_dir, ledger = _crashed_session(golden, crash_at, workspace)
    gate_read, gate_write = os.pipe()
    env = {"STRANDS_SYNTHETIC_LATENCY_MS": str(latency_ms)}
    pids = []
    for _ in range(resumers):

        def body() -> int:
            os.close(gate_write)
            return _resume_child(golden.target, sessions, out_dir, ledger, store_factory, gate=gate_read)

        pids.append(fork_child(body, env=env))
    os.close(gate_read)
    os.close(gate_write)  # all resumers start at once
    exits = [wait_child(pid) for pid in pids]
    point, variant = crash_at, f"race-{resumers}"
    run.explore_at(point)
    winners = [e for e in exits if e == ChildExit(0, None)]
    allowed_losers = {ChildExit(int(ExitCode.SESSION_UNUSABLE), None), ChildExit(int(ExitCode.USAGE), None)}
    losers = [e for e in exits if e != ChildExit(0, None)]
    run.outcomes[f"race: {len(winners)} proceeded, {len(losers)} refused"] += 1
    if len(winners) != 1:
        run.add(point, variant, "lease", f"{len(winners)} of {resumers} racing resumers proceeded (exactly one may)")
    for ended in losers:
        if ended not in allowed_losers:
            run.add(point, variant, "lease", f"a losing resumer ended with {ended.describe()}, not exit 17")
    _judge(golden, sessions, ledger, point, variant, run)


def takeover(
    golden: WorkflowGoldenRun,
    crash_at: str,
    workspace: Path,
    run: FaultRun,
    *,
    latency_ms: int,
    store_factory: StoreFactory = store_at,
) -> None:
    sessions, out_dir, ledger = _crashed_session(golden, crash_at, workspace)
    env = {"STRANDS_SYNTHETIC_LATENCY_MS": str(latency_ms)}
    marker = workspace / "holder-running"
    point, variant = crash_at, "takeover"
    run.explore_at(point)
    holder = fork_child(
        lambda: _resume_child(golden.target, sessions, out_dir, ledger, store_factory, marker=marker), env=env
    )
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        done, _ = os.waitpid(holder, os.WNOHANG)
        if done:  # the holder finished before running a tool: nothing left to take over
            run.outcomes["takeover: the holder finished first"] += 1
            _judge(golden, sessions, ledger, point, variant, run)
            return
        time.sleep(0.002)
    second = run_in_child(lambda: _resume_child(golden.target, sessions, out_dir, ledger, store_factory))
    if second != ChildExit(int(ExitCode.SESSION_UNUSABLE), None):
        run.add(
            point,
            variant,
            "lease",
            f"a resumer started while the holder ran ended with {second.describe()}, not exit 17",
        )
    os.kill(holder, signal.SIGKILL)
    wait_child(holder)
    mark_death(sessions)
    third = run_in_child(lambda: _resume_child(golden.target, sessions, out_dir, ledger, store_factory))
    if third != ChildExit(0, None):
        run.add(point, variant, "takeover", f"the resumer after the holder's death ended with {third.describe()}")
        return
    run.outcomes["takeover: completed after the holder's death"] += 1
    _judge(golden, sessions, ledger, point, variant, run)


def _judge(
    golden: WorkflowGoldenRun, sessions: Path, ledger: ToolLedger, point: str, variant: str, run: FaultRun
) -> None:
    run.judged(
        point,
        variant,
        judge.completed_on_disk(golden, sessions, golden.target.session_id, sessions.parent / "workspace"),
    )
    run.judged(point, variant, ledger.reruns(golden))


# the gate steps two resumers in lockstep through the first commits of one resume; `full` through every commit
FAULT_CLASS = FaultClass(
    FAULT,
    {
        "gate": {"rounds": 1, "resumers": 3, "lockstep": True, "lockstep_commits": 4},
        "full": {"rounds": 3, "resumers": 4, "lockstep": True},
    },
    explore_concurrent,
)
