"""Racing resumers at every commit, in lockstep (the `concurrent` class's `lockstep` mode).

A session is left crashed; then, for every commit i of its resume: a first resumer, in a child process, runs until
right after its i-th commit and stops there (a crash-point subscriber waiting on a pipe), holding the session; a
second resumer starts and runs until it errors or finishes; then the first goes on. Judged: exactly one proceeds,
the other gets its documented error (exit 17: the session is in use), nothing forks (no committed tool runs
twice) and the finished session equals the golden one. The i-th commit is reached or the resume has fewer: the
loop ends at the first i the first resumer finishes without reaching.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoints
from strands_durable.faults.kit.findings import FaultRun
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.ledger import ToolLedger
from strands_durable.faults.kit.lockstep import VARIANT, StopAt, holding, race_at_commit
from strands_durable.faults.kit.observe import run_options

StoreFactory = Callable[[Path], Any]
CrashedSession = Callable[[WorkflowGoldenRun, str, Path], tuple[Path, Path, ToolLedger]]
JudgeFinished = Callable[[WorkflowGoldenRun, Path, ToolLedger, str, str, FaultRun], None]


def _resume_stopping_at(
    golden: WorkflowGoldenRun,
    place: tuple[Path, Path, ToolLedger],
    store_factory: StoreFactory,
    stop: StopAt | None = None,
) -> int:
    """Resume the session at `place` (sessions, output directory, tool ledger), stopping where `stop` says."""
    from strands_durable.runner.run import resume

    sessions, out_dir, ledger = place
    bus = CrashPoints()
    ledger.subscribe(bus)
    if stop is not None:
        bus.subscribe(holding(stop))
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
        place = self.crashed_session(self.golden, self.crash_at, self.workspace)
        point = f"{self.crash_at}/commit[{i}]"

        def resume(stop: StopAt | None) -> int:
            return _resume_stopping_at(self.golden, place, self.store_factory, stop)

        race = race_at_commit(self.run, point, i, self.workspace / "first-stopped", resume)
        if race is None:
            return False
        self.run.outcomes["lockstep: " + ("one proceeded" if race.one_proceeded else "broken")] += 1
        self.judge_finished(self.golden, place[0], place[2], point, VARIANT, self.run)
        return True
