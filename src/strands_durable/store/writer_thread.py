"""`WriterThread`: runs one piece of work on a background thread each time it is woken.

Wakes that arrive while the work runs fold into one more run. The thread ends after a short idle time and starts
again at the next wake, so a session left without `stop` (a crashed run) keeps no thread for long; `stop` waits
for a run in progress and refuses later wakes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["WriterThread"]


class WriterThread:
    def __init__(self, work: Callable[[], None], *, name: str, idle_s: float = 0.05) -> None:
        self._work = work
        self._name = name
        self._idle_s = idle_s
        self._cond = threading.Condition()
        self._pending = False
        self._stopped = False
        self._thread: threading.Thread | None = None

    def wake(self) -> None:
        with self._cond:
            if self._stopped:
                return
            self._pending = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            else:
                self._cond.notify()

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    if not self._pending and not self._stopped:
                        self._cond.wait(self._idle_s)
                    if not self._pending or self._stopped:
                        return
                    self._pending = False
                self._work()
        finally:
            with self._cond:
                self._thread = None

    def stop(self) -> None:
        """Refuse later wakes and wait for the run in progress (if any) to end."""
        with self._cond:
            self._stopped = True
            thread = self._thread
            self._cond.notify()
        if thread is not None and thread is not threading.current_thread():
            thread.join()
