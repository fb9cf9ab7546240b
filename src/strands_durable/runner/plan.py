"""Plan mode: run a pattern up to its first uncommitted units and name them, instead of running them.

Every pattern is an imperative loop over units, and every agent unit goes through `run_agent_unit`. With a
`UnitGate` in `RunOptions.unit_gate`, a unit the gate does not allow is not started: it is recorded as ready
and `UnitNotScheduled` (a pause, so concurrent siblings still run and commit) stops the run without committing
anything. Committed units replay as usual, so one pass computes the next step of any pattern from the
session's committed state:

- `UnitGate()` (nothing allowed): the units that are ready now; none means the run finished, failed or paused;
- `UnitGate({"step[2]"})`: run that one unit (replaying what is committed), defer every other.

An engine that schedules units itself (strands_durable.temporal) loops on that; the runner's own control flow
is the only one.

A unit pass may run while sibling units' passes commit to the same session from other processes (unit leases,
docs/storage.md). What it commits must then commute with theirs: its own unit's records only. So a unit pass
commits no status but a failure (the plan pass makes a session `running`, the stop activity `paused`), asks no
human (a HITL step waits for the next plan pass), and a unit among concurrent siblings commits no pattern position
(each sibling's position would omit the others'; positions of those patterns are read by nobody but `show`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from strands_durable.errors import HitlPaused, SessionFenced, SessionInUse, StorageIOError
from strands_durable.store import events

T = TypeVar("T")
_RETRYABLE = (SessionInUse, SessionFenced, StorageIOError)
"""Failures of the attempt, not of the run: raised, so the engine retries the step (another worker may)."""


class UnitNotScheduled(HitlPaused):
    """A unit the gate did not allow: the run stops before it, with nothing committed for it."""


_jobs = threading.local()  # `.sibling`: this thread runs one of several units that may run at once


@dataclass
class UnitGate:
    """Which uncommitted units may run in this pass; the ones that were reached and not allowed, in order."""

    allowed: frozenset[str] = frozenset()
    ready: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def admit(self, unit: str) -> None:
        """Return if `unit` may run now; else record it as ready and raise `UnitNotScheduled`."""
        if unit in self.allowed:
            return
        with self._lock:
            if unit not in self.ready:
                self.ready.append(unit)
        raise UnitNotScheduled(f"{unit} is ready and was not scheduled in this pass")

    @property
    def unit_pass(self) -> bool:
        """A pass that runs a unit (its siblings' passes may commit meanwhile), not a plan pass."""
        return bool(self.allowed)

    def ask(self, unit: str) -> None:
        """Before a HITL step asks or answers: a unit pass stops there (nothing committed, nothing recorded as
        ready); the next plan pass asks."""
        if self.allowed and unit not in self.allowed:
            raise UnitNotScheduled(f"{unit} asks a human: the next plan pass asks")

    def keeps_position(self) -> bool:
        """Whether a unit committed now commits the pattern's position with it: not in a unit pass whose unit is
        among concurrent siblings (their positions would not commute)."""
        return not (self.allowed and getattr(_jobs, "sibling", False))


def run_as_sibling(job: Callable[[], T]) -> Callable[[], T]:
    """`job` marked, while it runs in its thread, as one of several concurrent units (see `keeps_position`)."""

    def marked() -> T:
        _jobs.sibling = True
        try:
            return job()
        finally:
            _jobs.sibling = False

    return marked


@dataclass(frozen=True)
class StepOutcome:
    """What one pass of plan mode left: `ready` units to run next, or the run's end (`completed`, `paused` for a
    human, `failed`), with the one-line reason and exit code of a failure or pause."""

    status: str  # "ready" | "completed" | "paused" | "failed"
    ready: tuple[str, ...] = ()
    reason: str = ""
    exit_code: int = 0


def plan_step(session_id: str, options: Any, *, store: Any, unit: str | None = None) -> StepOutcome:
    """One pass over a session in plan mode: run `unit` (None: none), stop at the next ready units.

    `options` are the caller's RunOptions (reporter, stop request, HITL answer); the gate is set here. A
    completed session is `completed`; a pause for a human is `paused` only when no unit is ready (units that
    can run without the answer run first, as in a local run).
    """
    from dataclasses import replace

    from strands_durable.agent.durable import StopRequested
    from strands_durable.errors import DurableError, SessionCompleted, exit_code_for
    from strands_durable.runner.run import resume

    gate = UnitGate(frozenset([unit]) if unit else frozenset())
    try:
        resume(session_id, replace(options, unit_gate=gate), store=store)
    except SessionCompleted:
        return StepOutcome("completed")
    except HitlPaused as exc:
        if gate.ready:
            return StepOutcome("ready", tuple(gate.ready))
        return StepOutcome("paused", reason=str(exc), exit_code=exit_code_for(exc))
    except StopRequested:
        raise
    except DurableError as exc:
        if isinstance(exc, _RETRYABLE):
            raise
        return StepOutcome("failed", reason=str(exc), exit_code=exit_code_for(exc))
    return StepOutcome("completed")


def mark_stopped(session_id: str, *, store: Any) -> None:
    """Record that a cancelled run stopped: a session still `running` becomes `paused` (interrupted), as a local
    run stopped by Ctrl+C; a paused, failed or completed one is left as it is."""
    session = store.open(store.resolve(session_id))
    try:
        if session.state.status == "running":
            session.commit([events.status("paused", "interrupted")], path="status")
    finally:
        session.close()
