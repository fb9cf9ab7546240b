"""Units that may run at the same time (workflow tasks, parallel branches, orchestrator workers), in threads.

At most `max_parallel` jobs run at once. How one job's outcome affects the others:
- a HITL pause: the other jobs, and any job that becomes ready, still run and commit; the pause is raised last;
- an error: jobs already running finish and commit, no new job starts, then the first error is raised;
- a BaseException (InjectedCrash, StopRequested, KeyboardInterrupt): the run is cancelled, running jobs stop at
  their next safe point (before a model call, a tool, or their next unit), and once every thread has stopped the
  first one is raised as it was, so no thread commits after the caller abandons the session.
A job that waits for another unit's pending question (`HitlDeferred`) runs again once that question is answered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from strands_durable.agent.durable import StopRequested
from strands_durable.errors import HitlPaused
from strands_durable.runner.context import RunContext
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
    return group.run()


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

    def run(self) -> dict[str, Any]:
        pool = ThreadPoolExecutor(max_workers=self.max_parallel, thread_name_prefix="strands-unit")
        try:
            while True:
                self._start_ready(pool)
                if not self.running and not self._retry_deferred():
                    break
                if not self.running:
                    continue
                done, _ = wait(list(self.running), return_when=FIRST_COMPLETED)
                for future in done:
                    self._settle(future)
        except BaseException as exc:  # KeyboardInterrupt reaches the waiting main thread
            self._fail_hard(exc)
        finally:
            if self.running:
                wait(list(self.running))
                for future in list(self.running):
                    self._settle(future)
            pool.shutdown(wait=True)
        if self.fatal is not None:
            raise self.fatal
        if self.failure is not None:
            raise self.failure
        if self.pause is None and self.deferred:
            self.pause = self.deferred[0][1]
        if self.pause is not None:
            raise self.pause
        return self.results

    def _start_ready(self, pool: ThreadPoolExecutor) -> None:
        if self.fatal is not None or self.failure is not None:
            return
        for job in self.ready(self.results):
            if len(self.running) >= self.max_parallel:
                return
            if job.key in self.started:
                continue
            self.started.add(job.key)
            self.running[pool.submit(job.run)] = job

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
        else:
            self._fail_hard(exc)

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
