"""`WriterThread`: runs one piece of work (a session's message files) in the background when woken, at most once per
`min_interval_s`.

Wakes that arrive while the work runs, or before `min_interval_s` has passed since the last run began, fold into
one more run at the end of that interval. Every writer of the process is run by one thread (`views-writer`),
started at the first wake and kept while runs are due; it ends after a short idle time with none due, so a session
left without `stop` (a crashed run) keeps no thread for long, and a process that forks waits for it no longer than
that. One thread for all sessions, not one per session: starting a thread costs 0.5-1 ms of wall here, and a
resume from a crash (the chaos explorer runs one per crash point) wakes its writer with the first durable commit
and closes before the interval has passed. `stop` waits for a run in progress, drops a run still waiting for its
interval (the caller writes what is left) and refuses later wakes; after it the thread never runs this writer's
work again.
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable

from strands_durable.store.weak_calls import weakly

__all__ = ["WriterThread"]

_IDLE_S = 0.05  # how long the thread waits with no run due before it ends (as long as a session's syncer thread)


class _Runs:
    """The process's due runs, in time order, and the one thread that runs them."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.due: list[tuple[float, int, WriterThread]] = []  # (when, order, writer): a heap
        self.order = itertools.count()
        self.thread: threading.Thread | None = None
        self.looks_at = float("inf")  # when the waiting thread looks at the runs again by itself

    def schedule(self, writer: WriterThread, at: float) -> None:
        """Run `writer` at monotonic time `at` (called holding `cond`). The thread is woken only when it would look
        too late by itself (each wake of a thread is a switch of the GIL on the committing thread's path)."""
        heapq.heappush(self.due, (at, next(self.order), writer))
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="views-writer", daemon=True)
            self.thread.start()
        elif at < self.looks_at:
            self.cond.notify()

    def dropped(self, writer: WriterThread) -> None:
        """`writer`'s due run will not be made: wake the thread if it waits for that run (its idle time then
        starts, and a process that forks waits no longer than that)."""
        if self.due and self.due[0][2] is writer:
            self.cond.notify()

    def _next(self) -> WriterThread | None:
        """Wait for the next due run and take it (None: none was due for `_IDLE_S`: the thread ends)."""
        idle_until = None
        with self.cond:
            while True:
                while self.due and self.due[0][2].due_at != self.due[0][0]:
                    heapq.heappop(self.due)  # stopped, run already, or moved by `defer`
                if not self.due:
                    now = time.monotonic()
                    idle_until = idle_until or now + _IDLE_S  # a notify (a stop) does not shorten the idle time
                    if now >= idle_until:
                        self.thread = None  # in the same hold of the lock: a wake from now starts a new thread
                        return None
                    self.looks_at = idle_until
                    self.cond.wait(idle_until - now)
                    continue
                idle_until = None
                at, _, writer = self.due[0]
                delay = at - time.monotonic()
                if delay > 0:
                    self.looks_at = at
                    self.cond.wait(delay)
                    continue
                self.looks_at = float("-inf")  # running: it looks again when the run ends
                heapq.heappop(self.due)
                writer.due_at = None
                writer.running = True
                writer.last_run = time.monotonic()
                return writer

    def _run(self) -> None:
        try:
            while (writer := self._next()) is not None:
                try:
                    writer.work()
                finally:
                    with self.cond:
                        writer.running = False
                        self.cond.notify_all()
        finally:
            with self.cond:
                if self.thread is threading.current_thread():
                    self.thread = None
                self.cond.notify_all()


_runs = _Runs()


def _forget_after_fork() -> None:
    """A forked child has no writer thread and no lock held by one (the parent's state is not the child's)."""
    global _runs
    _runs = _Runs()


os.register_at_fork(after_in_child=_forget_after_fork)


def _nothing() -> None:
    """The work of a writer whose session is gone: the next open re-derives what it had not written."""


class WriterThread:
    def __init__(self, work: Callable[[], None], *, min_interval_s: float = 0.0) -> None:
        """`work`: a bound method is held weakly (store/weak_calls.py): once its object is gone, nothing is run."""
        self.work = weakly(work, _nothing)
        self._min_interval_s = min_interval_s
        self._stopped = False
        self.due_at: float | None = None  # when its run is due (None: no run is)
        self.running = False
        self.last_run = float("-inf")  # monotonic time the last run began

    def wake(self) -> None:
        runs = _runs
        with runs.cond:
            if self._stopped or self.due_at is not None:
                return  # a run is already due: this wake folds into it (no thread switch)
            self.due_at = max(time.monotonic(), self.last_run + self._min_interval_s)
            runs.schedule(self, self.due_at)

    def defer(self) -> None:
        """Count a run as begun now: the next wake runs no sooner than `min_interval_s` from now."""
        runs = _runs
        with runs.cond:
            self.last_run = time.monotonic()
            if self.due_at is not None:  # a run already due moves to the end of the new interval
                self.due_at = self.last_run + self._min_interval_s
                runs.schedule(self, self.due_at)

    def halt(self) -> None:
        """As `stop`, without waiting: what a crashed process leaves (a run in progress ends, one waiting for its
        interval never runs). Safe to call from any thread, the writer's own included."""
        with _runs.cond:
            if self.due_at is not None:
                _runs.dropped(self)
            self._stopped = True
            self.due_at = None

    def stop(self) -> None:
        """Refuse later wakes, drop a run still waiting for its interval, and wait for a run in progress to end."""
        runs = _runs
        with runs.cond:
            if self.due_at is not None:
                runs.dropped(self)
            self._stopped = True
            self.due_at = None
            while self.running and runs.thread is not threading.current_thread():
                runs.cond.wait()
