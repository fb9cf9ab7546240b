"""The kill class times its random signals from the moment the child's stop handlers are in: a child slow to get
there is never signalled early and reported as the product's unclean stop, a child that dies before its run starts
is the harness's failure, and the product's real unclean stops are still found."""

from __future__ import annotations

import dataclasses
import os
import signal
import time
from pathlib import Path
from types import FrameType
from typing import Any

from strands_durable.faults.classes.kill import kill_at_point, kill_at_random
from strands_durable.faults.kit.findings import FaultRun
from strands_durable.faults.kit.forking import ChildExit, run_in_child
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.ledger import ToolLedger
from strands_durable.faults.kit.runs import crashing_run
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.runner.signals import StopSignals
from tests.faults.conftest import describe, rules

LATENCY_MS = 5


@dataclasses.dataclass
class _SlowChild(ChaosTarget):
    """A target whose forked children take `pause_s` before they read the first thing a run needs (its variables):
    a loaded machine that schedules a new child late. `fail` makes that read raise instead."""

    pause_s: float = 0.0
    fail: bool = False
    parent: int = dataclasses.field(default_factory=os.getpid)

    def __getattribute__(self, name: str) -> Any:
        if name == "variables" and os.getpid() != object.__getattribute__(self, "parent"):
            if object.__getattribute__(self, "fail"):
                raise RuntimeError("the child failed before its run started")
            time.sleep(object.__getattribute__(self, "pause_s"))
        return object.__getattribute__(self, name)


def _with_target(golden: WorkflowGoldenRun, **slow: Any) -> WorkflowGoldenRun:
    target = _SlowChild(golden.target.spec_path, seed=golden.target.seed, **slow)
    return dataclasses.replace(golden, target=target)


def test_a_random_sigterm_lands_after_the_childs_stop_handlers_are_in_however_late_it_gets_there(
    chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    golden = _with_target(chain_golden, pause_s=0.3)
    run = FaultRun("kill", "chain")
    for delay in (0.0, 0.02):  # measured from the fork these would land before the handlers
        kill_at_random(golden, "SIGTERM", delay, tmp_path / "kill", run, LATENCY_MS)
    assert not run.findings, describe(run.findings)
    assert run.explored == 2
    stopped = run.outcomes["resumed"] + run.outcomes["killed-before-the-session-existed"]
    assert stopped == 2, run.outcomes


def test_a_child_that_ends_before_its_run_starts_is_the_harness_failure_not_the_products(
    chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    run = FaultRun("kill", "chain")
    kill_at_random(_with_target(chain_golden, fail=True), "SIGTERM", 0.0, tmp_path / "kill", run, LATENCY_MS)
    assert [(f.rule, f.detail) for f in run.findings] == [
        ("harness-error", "the child ended with exit 70 before its run started (no signal was sent)")
    ]


class _DiesBySignal(StopSignals):
    """Broken SIGINT/SIGTERM handling: the handler ends the process by the signal's default action, no clean stop."""

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


class _ExitsWithoutStopping(StopSignals):
    """Broken SIGINT/SIGTERM handling: the handler exits with the stop's exit code at once, leaving the session
    running instead of paused."""

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        os._exit(143 if signum == signal.SIGTERM else 130)


def test_the_products_unclean_stops_on_sigterm_are_still_found(chain_golden: WorkflowGoldenRun, tmp_path: Path) -> None:
    died = FaultRun("kill", "chain")
    kill_at_random(chain_golden, "SIGTERM", 0.0, tmp_path / "kill", died, LATENCY_MS, handlers=_DiesBySignal)
    assert [(f.rule, f.detail) for f in died.findings] == [
        ("unclean-stop", "the child ended with killed by SIGTERM")
    ], describe(died.findings)
    left_running = FaultRun("kill", "chain")
    point = next(p.point.id for p in chain_golden.points if p.point.site == "model.before" and p.index > 10)
    kill_at_point(chain_golden, point, "SIGTERM", tmp_path / "kill", left_running, handlers=_ExitsWithoutStopping)
    assert "a graceful stop left the session running, not paused" in describe(left_running.findings)
    assert rules(left_running.findings) >= {"status"}


def test_a_signal_that_arrives_once_the_run_has_returned_finds_the_child_leaving_with_its_exit_code(
    chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    ledger = ToolLedger(tmp_path / "tools.log", durable=False)
    scratch = chain_golden.seed_workspace(tmp_path / "workspace")
    read_end, write_end = os.pipe()

    def run_then_signalled() -> int:
        code = crashing_run(
            chain_golden.target,
            tmp_path / "sessions",
            tmp_path / "out",
            ledger,
            None,
            0,
            scratch=scratch,
            ready_pipe=write_end,
        )
        os.kill(os.getpid(), signal.SIGTERM)  # the parent's signal, landing while the child leaves
        return code

    try:
        ended = run_in_child(run_then_signalled)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert ended == ChildExit(0, None)
