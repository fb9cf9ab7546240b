"""`SyncerThread`: makes a journal's deferred commits durable on a background thread (group commit).

A deferred commit is appended at once by the committing thread, which then asks for its seq to become durable
(`request`) and goes on. The syncer runs the sync function (the journal's fdatasync), which covers everything
appended before it started: every seq requested by then is durable when it returns, so records appended while one
fdatasync is in flight share the next one. `wait(seq)` blocks until `seq` is durable, or raises the OSError the
sync failed with (a failed sync ends the syncer: nothing after it is ever reported durable).

The GIL: a woken thread waits for the running one to block or for the 5 ms switch interval, so a syncer that is
merely notified would start its fdatasync only when the committing thread blocks at the barrier, and overlap
nothing. `request` therefore hands over: when no sync is in flight it waits (GIL released) until the syncer has
taken the request, then the syncer holds the GIL only until its fdatasync releases it.

The thread ends after a short idle time and starts again at the next request, so a session left without `stop`
(a crashed run) keeps no thread for long; `stop` lets it finish what was requested and waits for it to end.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["SyncerThread"]


class SyncerThread:
    def __init__(
        self,
        sync: Callable[[], None],
        on_durable: Callable[[int], None],
        *,
        durable: int,
        name: str,
        idle_s: float = 0.05,
    ) -> None:
        """`durable`: the seq already durable; `on_durable(seq)` runs on the syncer after each successful sync."""
        self._sync = sync
        self._on_durable = on_durable
        self._name = name
        self._idle_s = idle_s
        self._cond = threading.Condition()
        self._requested = durable
        self._started = durable  # what the sync in flight (or the last one) covers
        self._durable = durable
        self._syncing = False
        self._error: OSError | None = None
        self._stopped = False
        self._thread: threading.Thread | None = None  # the running syncer (None: a request starts one)
        self._last: threading.Thread | None = None  # the last one started, joined by `stop` even as it ends

    @property
    def durable(self) -> int:
        return self._durable

    def request(self, seq: int) -> None:
        """Ask for `seq` (appended already) to become durable; returns once a sync that will cover it is under way
        or queued behind the one in flight."""
        with self._cond:
            if self._stopped or self._error is not None or seq <= self._requested:
                return
            self._requested = seq
            if self._thread is None:
                self._thread = self._last = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            else:
                self._cond.notify_all()
            if self._syncing:
                return  # the next sync, right after this one, covers it (group commit)
            while self._started < seq and self._durable < seq and self._thread is not None and self._error is None:
                self._cond.wait()  # the handover (module docstring)

    def synced(self, seq: int) -> None:
        """`seq` was made durable by a sync outside this thread (a synchronous commit's own fdatasync)."""
        with self._cond:
            if seq > self._durable:
                self._durable = seq
                self._requested = max(self._requested, seq)
                self._cond.notify_all()

    def wait(self, seq: int) -> None:
        """Block until `seq` is durable; raise the OSError of a failed sync."""
        with self._cond:
            while self._durable < seq:
                if self._error is not None:
                    raise self._error
                if self._thread is None:
                    raise OSError(f"the journal's syncer ended before commit {seq} was durable")
                self._cond.wait()

    def drain(self) -> None:
        """Wait until no sync is in flight (before the synced file is replaced or closed)."""
        with self._cond:
            while self._syncing:
                self._cond.wait()

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    if self._requested <= self._durable and not self._stopped:
                        self._cond.wait(self._idle_s)
                    if self._requested <= self._durable:
                        self._thread = None  # in the same hold of the lock: a request from now starts a new one
                        self._cond.notify_all()
                        return
                    target = self._started = self._requested
                    self._syncing = True
                    self._cond.notify_all()
                try:
                    self._sync()
                except OSError as exc:
                    with self._cond:
                        self._error = exc
                    return
                finally:
                    with self._cond:
                        self._syncing = False
                        self._cond.notify_all()
                with self._cond:
                    self._durable = max(self._durable, target)
                    self._cond.notify_all()
                self._on_durable(target)
        finally:
            with self._cond:
                if self._thread is threading.current_thread():
                    self._thread = None
                self._cond.notify_all()

    def stop(self) -> None:
        """Refuse later requests, let the thread finish what was requested, and wait for it to end."""
        with self._cond:
            self._stopped = True
            thread = self._last
            self._cond.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join()
