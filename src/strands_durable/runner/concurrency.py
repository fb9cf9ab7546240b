"""Units that may run at the same time (workflow tasks, parallel branches, orchestrator workers), in threads.

At most `max_parallel` jobs run at once. How one job's outcome affects the others:
- a HITL pause: the other jobs, and any job that becomes ready, still run and commit; the pause is raised last;
- an error: jobs already running finish and commit, no new job starts, then the first error is raised;
- a BaseException (InjectedCrash, StopRequested, KeyboardInterrupt): the run is cancelled, running jobs stop at
  their next safe point (before a model call, a tool, or their next unit), and once every thread has stopped the
  first one is raised as it was, so no thread commits after the caller abandons the session.
A job that waits for another unit's pending question (`HitlDeferred`) runs again once that question is answered.

With `RunOptions.lockstep` (chaos runs) the jobs still run in their own threads, but one at a time, taking turns
at their crash points in an order fixed by where each job stands (`Lockstep`), so the interleaving, and with it
every crash point and every stored state, is the same in every run from the same durable state.
`RunOptions.lockstep_priority` (the chaos kit's unit orders) names jobs by a unit of theirs, and so by the job's own
identity, the unit's first path segment (`branch:web`, `task:plan`, `round[0]:worker[1]`): a named job that is
waiting goes before every other, the first named first, so the units of a layer finish in that order, in a resumed
run as in the uninterrupted one, whichever of its units a resumed job starts with.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from strands_durable.agent.durable import StopRequested
from strands_durable.agent.loop import unit_pool
from strands_durable.crashpoints import SITES, CrashPoint
from strands_durable.errors import HitlPaused
from strands_durable.runner.context import RunContext
from strands_durable.runner.plan import run_as_sibling
from strands_durable.runner.units import HitlDeferred, completed


@dataclass(frozen=True)
class Job:
    key: str
    run: Callable[[], Any]


ReadyJobs = Callable[[Mapping[str, Any]], list[Job]]


def check_cancelled(ctx: RunContext) -> None:
    """A safe point between units: stop here when a sibling crashed or the user asked to stop."""
    if ctx.cancelled.is_set() or ctx.options.stop_requested():
        raise StopRequested()


def run_concurrently(ctx: RunContext, ready: ReadyJobs, *, max_parallel: int) -> dict[str, Any]:
    """Run the jobs `ready(results so far)` offers until none is left; returns each job's result by key."""
    group = _Group(ctx, ready, max(1, max_parallel))
    if group.lockstep is None:
        return group.run()
    ctx.crash.subscribe(group.lockstep.at_point)
    try:
        return group.run()
    finally:
        ctx.crash.unsubscribe(group.lockstep.at_point)


_TURN_SITES = frozenset({"unit.before", "model.before", "tool.before"})
"""Where a lockstep job hands over its turn: sites it reaches holding no lock another job may need."""
_SITE_RANK = {site: rank for rank, site in enumerate(SITES)}


def _position(point: CrashPoint) -> list[Any]:
    """Where a job stands: the point's place below the job's own unit segment (step, turn, tool), then the site.
    Jobs at the same depth of their work come out next to each other, so units of different jobs interleave turn
    by turn."""
    return [*point.place, ("", _SITE_RANK[point.site])]


def job_identity(unit: str) -> str:
    """The job a unit belongs to: its first path segment (`branch:web/step[1]` -> `branch:web`), the same for every
    unit the job runs."""
    return unit.split("/", 1)[0]


class Lockstep:
    """Jobs take turns: one runs until its next turn site, then the waiting job that stands earliest (ties by
    job key) goes. Which job goes next depends only on where the jobs stand, never on thread timing, so a
    resumed run interleaves its units as the uninterrupted run did from the same durable state. Jobs are
    registered by the group's thread before they are submitted; a finished job's turn is handed on by that
    thread once it has offered the jobs the finish made ready, so they take part in the choice too. Once the run
    is cancelled (a sibling crashed, the user stopped it) a job given the turn stops where it waited, a safe
    point, and commits nothing more: as in a process that died, no sibling moves on after the crash.

    `priority`: unit ids, each naming its job (`job_identity`); a waiting job so named goes before every other, the
    one named first before the rest, whatever their positions. A job is recognised at its first `unit.before` by
    the identity of that unit, whichever of its units it is: a resumed job that starts with a later unit than the
    uninterrupted run's did keeps its rank, so the resumed run takes the turns the uninterrupted one took from the
    same durable state. A job that has not yet reached its first unit goes before all of them, so every job of a
    group starts as without a priority."""

    def __init__(self, cancelled: threading.Event, priority: tuple[str, ...] = ()) -> None:
        self._cancelled = cancelled
        self._rank: dict[str, int] = {}
        for unit in priority:
            self._rank.setdefault(job_identity(unit), len(self._rank))
        self._ranks: dict[str, int] = {}  # job key -> its rank, once its first unit named it
        self._lock = threading.Lock()
        self._wakeups: dict[str, threading.Condition] = {}  # one per job, all on `_lock`: only the next job wakes
        self._waiting: dict[str, list[Any]] = {}
        self._turn: str | None = None
        self._local = threading.local()

    def register(self, key: str) -> None:
        with self._lock:
            self._waiting[key] = []  # a job that has not started stands before every crash point
            self._wakeups[key] = threading.Condition(self._lock)

    def begin(self, key: str) -> None:
        self._local.key = key
        self._wait_for_turn(key)

    def at_point(self, point: CrashPoint) -> None:
        key = getattr(self._local, "key", None)
        if key is None or point.site not in _TURN_SITES:
            return
        with self._lock:
            if self._rank and key not in self._ranks:  # the job's first turn: its unit names it
                unit = getattr(point, "unit", "") if point.site == "unit.before" else ""
                self._ranks[key] = self._rank.get(job_identity(unit), len(self._rank)) if unit else len(self._rank)
            self._waiting[key] = _position(point)
            self._turn = None
            self._hand_on()
        self._wait_for_turn(key)

    def _wait_for_turn(self, key: str) -> None:
        with self._lock:
            wakeup = self._wakeups[key]
            while self._turn != key:
                wakeup.wait()
        if self._cancelled.is_set():
            raise StopRequested()

    def end(self, key: str) -> None:
        self._local.key = None
        with self._lock:
            self._waiting.pop(key, None)
            self._wakeups.pop(key, None)
            self._ranks.pop(key, None)
            if self._turn == key:
                self._turn = None

    def hand_on(self) -> None:
        """Give the turn to the earliest waiting job if nobody has it (the group's thread, after settling)."""
        with self._lock:
            if self._turn is None:
                self._hand_on()

    def _hand_on(self) -> None:
        if self._waiting:
            # a job not yet named by a priority ranks -1 (without a priority: every job), then by position
            key = min(self._waiting, key=lambda k: (self._ranks.get(k, -1), self._waiting[k], k))
            del self._waiting[key]
            self._turn = key
            self._wakeups[key].notify()


def _drop_frames(exc: BaseException) -> None:
    """Let go of the frames a job's exception that nobody raises unwound (a sibling stopped at its safe point after
    the crash, a later failure): the SDK's frames it passed through hold the exception in their locals, a cycle that
    would keep the job's agent, session and state alive until a collection finds it."""
    exc.__traceback__ = None


class _Group:
    def __init__(self, ctx: RunContext, ready: ReadyJobs, max_parallel: int) -> None:
        self.ctx = ctx
        self.ready = ready
        self.max_parallel = max_parallel
        self.results: dict[str, Any] = {}
        self.started: set[str] = set()
        self.running: dict[Future, Job] = {}
        self.deferred: list[tuple[Job, HitlDeferred]] = []
        self.fatal: BaseException | None = None
        self.failure: Exception | None = None
        self.pause: HitlPaused | None = None
        options = ctx.options
        self.lockstep = Lockstep(ctx.cancelled, options.lockstep_priority) if options.lockstep else None

    def run(self) -> dict[str, Any]:
        pool = unit_pool()  # threads (and their event loops) kept between groups; at most max_parallel of ours run
        try:
            while True:
                self._start_ready(pool)
                if not self.running and not self._retry_deferred():
                    break
                if not self.running:
                    continue
                self._wait_for_one()
        except BaseException as exc:  # KeyboardInterrupt reaches the waiting main thread
            self._fail_hard(exc)
        finally:
            while self.running:  # every job has returned before the group does (the pool outlives it)
                self._wait_for_one()
        if self.fatal is not None:
            raise self.fatal
        if self.failure is not None:
            raise self.failure
        if self.pause is None and self.deferred:
            self.pause = self.deferred[0][1]
        if self.pause is not None:
            raise self.pause
        return self.results

    def _wait_for_one(self) -> None:
        if self.lockstep is not None:
            self.lockstep.hand_on()
        done, _ = wait(list(self.running), return_when=FIRST_COMPLETED)
        for future in done:
            self._settle(future)

    def _start_ready(self, pool: ThreadPoolExecutor) -> None:
        if self.fatal is not None or self.failure is not None:
            return
        for job in self.ready(self.results):
            if len(self.running) >= self.max_parallel:
                return
            if job.key in self.started:
                continue
            self.started.add(job.key)
            self.running[pool.submit(self._job_body(job))] = job

    def _job_body(self, job: Job) -> Callable[[], Any]:
        lockstep = self.lockstep
        if lockstep is None:
            return run_as_sibling(job.run)
        lockstep.register(job.key)

        def in_turns() -> Any:
            try:
                lockstep.begin(job.key)
                return job.run()
            finally:
                lockstep.end(job.key)

        return run_as_sibling(in_turns)

    def _settle(self, future: Future) -> None:
        job = self.running.pop(future)
        exc = future.exception()
        if exc is None:
            self.results[job.key] = future.result()
        elif isinstance(exc, HitlDeferred):
            self.deferred.append((job, exc))
        elif isinstance(exc, HitlPaused):
            self.pause = self.pause or exc
        elif isinstance(exc, Exception):
            self.failure = self.failure or exc
            if self.failure is not exc:  # a later failure, never raised
                _drop_frames(exc)
        else:
            self._fail_hard(exc)
            if self.fatal is not exc:  # a sibling stopped after the crash (StopRequested), never raised
                _drop_frames(exc)

    def _fail_hard(self, exc: BaseException) -> None:
        if self.fatal is None:
            self.fatal = exc
        self.ctx.cancelled.set()

    def _retry_deferred(self) -> bool:
        """Offer deferred jobs again once the question they waited for is answered (True if any was)."""
        if not self.deferred or self.fatal is not None or self.failure is not None:
            return False
        pending = self.ctx.state.pattern_state.get("pending_hitl") or {}
        if pending and completed(self.ctx, pending.get("unit", "")) is None:
            return False
        jobs = [job for job, _ in self.deferred]
        self.deferred.clear()
        for job in jobs:
            self.started.discard(job.key)
        original = self.ready
        self.ready = lambda results: [*jobs, *original(results)]
        return True
