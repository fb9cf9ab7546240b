"""The runs fault classes drive: a crashing run (in a child process, dying by a signal at a crash point), a
resuming run in fresh objects (optionally stopping where it converges on the golden run), a run paused after its
first unit, and what the parent does between them (wait for a dead run's threads, digest a crash state).

Shared by the kill, concurrent, compound and disk classes; each class module keeps only its own exploration.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_durable.agent.durable import StopRequested
from strands_durable.agent.loop import stop_pool_threads
from strands_durable.crashpoints import CrashPoint, CrashPoints, UnitBoundary
from strands_durable.faults.common import write_scratch
from strands_durable.faults.golden import ChaosTarget, GoldenRun
from strands_durable.faults.observe import Converged, Phase, ToolLedger, observed_store, run_options, watch_convergence
from strands_durable.runner.run import resume, run_workflow
from strands_durable.runner.signals import StopSignals  # imported here, in the warm parent, not in every child
from strands_durable.store import LocalStore
from strands_durable.store.wrapping import WrappingStore

NOT_FIRED = 99  # the child finished without reaching its crash point
_NO_NOTICE = -1  # a descriptor that is never open: the handlers' notice is dropped (they ignore OSError)


@dataclass(frozen=True)
class Trigger:
    """Where a crashing child signals itself: the `skip`-th emission (0-based) of a site and path in its run."""

    site: str
    path: str
    skip: int = 0


def crashing_run(
    target: ChaosTarget,
    sessions: Path,
    out_dir: Path,
    ledger: ToolLedger,
    crash_at: str | Trigger | None,
    signum: int,
    store_factory: Callable[[Path], Any] = LocalStore,
    *,
    from_prefix: bool = False,
    report: Path | None = None,
    scratch: Path | None = None,
) -> int:
    """A child's run that raises `signum` on itself at `crash_at` (a point id, or a `Trigger`; None: never):
    from scratch, or with `from_prefix` a resume of the session already in `sessions` (a golden journal
    prefix). Before the signal it names the point in `report` (the kernel keeps a killed process's writes).
    `scratch` is the run's copy of the tools' workspace."""
    bus = CrashPoints()
    ledger.subscribe(bus)
    fired: list[CrashPoint] = []
    seen = [0]

    def reached(point: CrashPoint) -> bool:
        if isinstance(crash_at, str):
            return point.id == crash_at
        if crash_at is None or point.site != crash_at.site or point.path != crash_at.path:
            return False
        seen[0] += 1
        return seen[0] > crash_at.skip

    def at_point(point: CrashPoint) -> None:
        if not fired and reached(point):
            fired.append(point)
            if report is not None:
                write_scratch(report, json.dumps([point.site, point.path, point.occurrence]).encode())
            os.kill(os.getpid(), signum)

    bus.subscribe(at_point)
    stops = StopSignals(notice_fd=_NO_NOTICE)  # the CLI's handlers, without their notice on the terminal
    options = run_options(target, out_dir, bus, scratch_dir=scratch, stop_requested=stops.requested)
    with stops:
        try:
            if from_prefix:
                resume(target.session_id, options, store=store_factory(sessions))
            else:
                run_workflow(target.spec_path, options, store=store_factory(sessions), session_id=target.session_id)
        except (StopRequested, KeyboardInterrupt):
            return stops.exit_code
    return 0 if fired or crash_at is None else NOT_FIRED


@dataclass(frozen=True)
class Convergence:
    """Where a resume stopped: the checkpoint whose snapshot equalled the golden run's, its journal record and
    the digest of the golden state it equalled."""

    point: CrashPoint
    seq: int
    digest: str


def resuming_run(
    target: ChaosTarget,
    sessions: Path,
    out_dir: Path,
    ledger: ToolLedger,
    *,
    converge_to: GoldenRun | None = None,
    store_factory: Callable[[Path], WrappingStore] = observed_store,
    scratch: Path | None = None,
) -> Convergence | None:
    """Resume the session in fresh objects; with `converge_to`, stop at the first commit whose snapshot (in
    memory) equals the golden run's at one of its checkpoints. The durable state there is judged afterwards."""
    bus = CrashPoints()
    ledger.subscribe(bus)
    store = store_factory(sessions)
    phase = Phase()
    if converge_to is not None:
        watch_convergence(bus, phase, store, converge_to)
    try:
        resume(target.session_id, run_options(target, out_dir, bus, scratch_dir=scratch), store=store)
    except Converged:
        assert phase.converged_at is not None
        return Convergence(phase.converged_at, phase.converged_seq, phase.converged_digest)
    return None


def wait_for_threads(timeout: float = 5.0) -> None:
    """Let the threads of an in-process run end before the next fork."""
    stop_pool_threads()
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join(timeout)


def journal_digest(path: Path) -> str:
    """The digest of a journal's committed events (timestamps left out): one per distinct crash state."""
    contents = LocalStore.read_journal_bytes(path.read_bytes())
    events = [record.get("events") for record in contents.records]
    return hashlib.sha256(json.dumps(events, sort_keys=True, default=str).encode()).hexdigest()


def paused_after_first_unit(golden: GoldenRun, sessions: Path, out_dir: Path, scratch: Path | None = None) -> Path:
    """Run the golden workflow until its first unit is committed, stop there cleanly; the session's directory."""
    bus = CrashPoints()
    done: list[CrashPoint] = []
    bus.subscribe(UnitBoundary, lambda p: done.append(p) if p.site == "unit.after" else None)
    with contextlib.suppress(StopRequested):
        run_workflow(
            golden.target.spec_path,
            run_options(golden.target, out_dir, bus, scratch_dir=scratch, stop_requested=lambda: bool(done)),
            store=LocalStore(sessions),
            session_id=golden.target.session_id,
        )
    return LocalStore(sessions).directory_of(golden.target.session_id)
