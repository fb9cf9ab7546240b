"""Racing resumers at every commit, in lockstep (the `concurrent` class's `lockstep` mode).

A session is left crashed; then, for every commit i of its resume: a first resumer, in a child process, runs until
right after its i-th commit and stops there (a crash-point subscriber waiting on a pipe), holding the session; a
second resumer starts and runs until it errors or finishes; then the first goes on. Judged: exactly one proceeds,
the other gets its documented error (exit 17: the session is in use), nothing forks (no committed tool runs
twice) and the finished session equals the golden one. The i-th commit is reached or the resume has fewer: the
loop ends at the first i the first resumer finishes without reaching.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoint, CrashPoints
from strands_durable.errors import ExitCode
from strands_durable.faults.kit.findings import FaultRun
from strands_durable.faults.kit.forking import ChildExit, fork_child, poll_child, run_in_child, wait_child
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.ledger import ToolLedger
from strands_durable.faults.kit.observe import run_options
from strands_durable.faults.kit.scratch import write_scratch

HOLD_SECONDS = 60  # how long the parent waits for the first resumer to stop or end


StoreFactory = Callable[[Path], Any]
CrashedSession = Callable[[WorkflowGoldenRun, str, Path], tuple[Path, Path, ToolLedger]]
JudgeFinished = Callable[[WorkflowGoldenRun, Path, ToolLedger, str, str, FaultRun], None]


def _resume_stopping_at(
    golden: WorkflowGoldenRun,
    place: tuple[Path, Path, ToolLedger],
    store_factory: StoreFactory,
    stop: tuple[int, Path, int] | None = None,
) -> int:
    """Resume the session at `place` (sessions, output directory, tool ledger); with `stop` = (i, marker, pipe),
    write `marker` right after this resume's i-th commit (counted from 0) and wait there until the parent closes
    the pipe."""
    from strands_durable.runner.run import resume

    sessions, out_dir, ledger = place
    bus = CrashPoints()
    ledger.subscribe(bus)
    if stop is not None:
        commit, marker, gate = stop
        seen = [0]

        def hold(point: CrashPoint) -> None:
            if point.site != "store.after_commit":
                return
            seen[0] += 1
            if seen[0] == commit + 1:
                write_scratch(marker, point.id.encode())
                os.read(gate, 1)  # returns once the parent closed the pipe's other end

        bus.subscribe(hold)
    target = golden.target
    options = run_options(target, out_dir, bus, scratch_dir=out_dir.parent / "workspace")
    resume(target.session_id, options, store=store_factory(sessions))
    return 0


def lockstep(
    golden: WorkflowGoldenRun,
    crash_at: str,
    workspace: Path,
    run: FaultRun,
    *,
    crashed_session: CrashedSession,
    judge_finished: JudgeFinished,
    store_factory: StoreFactory,
    max_commits: int | None = None,
) -> int:
    """Every commit i (at most `max_commits`) of the resume after a crash at `crash_at`, each from a fresh crashed
    session; returns how many commits were explored."""
    steps = _Steps(golden, crash_at, workspace, run, crashed_session, judge_finished, store_factory)
    explored = 0
    while (max_commits is None or explored < max_commits) and steps.at_commit(explored):
        explored += 1
    return explored


@dataclass
class _Steps:
    golden: WorkflowGoldenRun
    crash_at: str
    workspace: Path
    run: FaultRun
    crashed_session: CrashedSession
    judge_finished: JudgeFinished
    store_factory: StoreFactory

    def at_commit(self, i: int) -> bool:
        """The two resumers with the first stopped right after commit i; False when the resume ended before it."""
        proceeded, refused = ChildExit(0, None), ChildExit(int(ExitCode.SESSION_UNUSABLE), None)
        place = self.crashed_session(self.golden, self.crash_at, self.workspace)
        marker = self.workspace / "first-stopped"
        gate_read, gate_write = os.pipe()

        def first() -> int:
            os.close(gate_write)
            return _resume_stopping_at(self.golden, place, self.store_factory, (i, marker, gate_read))

        holder = fork_child(first)
        os.close(gate_read)
        ended = stopped_or_ended(marker, holder)
        point, variant = f"{self.crash_at}/commit[{i}]", "lockstep"
        if ended is not None:  # the resume finished before an i-th commit: every commit has been explored
            os.close(gate_write)
            if ended != proceeded:
                self.run.add(point, variant, "resume-failed", f"the resumer ended with {ended.describe()}")
            return False
        self.run.explore_at(point)
        second = run_in_child(lambda: _resume_stopping_at(self.golden, place, self.store_factory))
        os.close(gate_write)  # the first goes on
        first_ended = wait_child(holder)
        if first_ended != proceeded:
            detail = f"the first resumer, stopped after commit {i}, ended with {first_ended.describe()}"
            self.run.add(point, variant, "lease", detail)
        if second != refused:
            detail = f"a second resumer while the first held the session ended with {second.describe()}, not exit 17"
            self.run.add(point, variant, "lease", detail)
        one = (first_ended, second) == (proceeded, refused)
        self.run.outcomes["lockstep: " + ("one proceeded" if one else "broken")] += 1
        self.judge_finished(self.golden, place[0], place[2], point, variant, self.run)
        return True


def stopped_or_ended(marker: Path, pid: int) -> ChildExit | None:
    """None once `marker` exists (the child stopped where asked); how the child ended if it ended first."""
    deadline = time.monotonic() + HOLD_SECONDS
    while not marker.exists():
        ended = poll_child(pid)
        if ended is not None:
            return ended
        if time.monotonic() > deadline:
            raise RuntimeError(f"a resumer neither stopped nor ended within {HOLD_SECONDS} s")
        time.sleep(0.002)
    return None
