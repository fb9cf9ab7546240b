"""`WriterThread`: runs one piece of work on a background thread when woken, at most once per `min_interval_s`.

Wakes that arrive while the work runs, or before `min_interval_s` has passed since the last run began, fold into
one more run at the end of that interval. The thread ends after a short idle time and starts again at the next
wake, so a session left without `stop` (a crashed run) keeps no thread for long; `stop` waits for a run in
progress, drops a run still waiting for its interval (the caller writes what is left) and refuses later wakes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["WriterThread"]


class WriterThread:
    def __init__(
        self, work: Callable[[], None], *, name: str, idle_s: float = 0.05, min_interval_s: float = 0.0
    ) -> None:
        self._work = work
        self._name = name
        self._idle_s = idle_s
        self._min_interval_s = min_interval_s
        self._cond = threading.Condition()
        self._pending = False
        self._stopped = False
        self._thread: threading.Thread | None = None  # the running writer (None: a wake starts one)
        self._last: threading.Thread | None = None  # the last one started, joined by `stop` even as it ends
        self._last_run = float("-inf")  # monotonic time the last run began (kept across thread restarts)

    def wake(self) -> None:
        with self._cond:
            if self._stopped or self._pending:
                return  # a run is already due: this wake folds into it (no thread switch)
            self._pending = True
            if self._thread is None:
                self._thread = self._last = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            else:
                self._cond.notify()

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    if not self._pending and not self._stopped:
                        self._cond.wait(self._idle_s)
                    while self._pending and not self._stopped:
                        due = self._last_run + self._min_interval_s - time.monotonic()
                        if due <= 0:
                            break
                        self._cond.wait(due)
                    if not self._pending or self._stopped:
                        self._thread = None  # in the same hold of the lock: a wake from now starts a new thread
                        return
                    self._pending = False
                    self._last_run = time.monotonic()
                self._work()
        finally:
            with self._cond:
                if self._thread is threading.current_thread():
                    self._thread = None

    def defer(self) -> None:
        """Count a run as begun now: the next wake runs no sooner than `min_interval_s` from now."""
        with self._cond:
            self._last_run = time.monotonic()

    def halt(self) -> None:
        """As `stop`, without waiting: what a crashed process leaves (a run in progress ends, one waiting for its
        interval never runs). Safe to call from any thread, the writer's own included."""
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def stop(self) -> None:
        """Refuse later wakes, drop a run still waiting for its interval, and wait for the thread to end."""
        with self._cond:
            self._stopped = True
            thread = self._last
            self._cond.notify()
        if thread is not None and thread is not threading.current_thread():
            thread.join()
