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

Inline syncs: where the journal's fdatasync costs less than a handover to a thread (a RAM-backed file system such
as tmpfs, whose fdatasync has nothing to write back: under a microsecond, against a thread's start of 0.5-1 ms
and two switches of the GIL per handover), `request` runs the sync itself before it returns, and no thread starts.
The cost is the last sync timed on a committing thread (`synced(cost_s=...)` for a synchronous commit's own
fdatasync, or an inline one), kept per process for the `cost_key` the session gives (its file layer and device);
until one is timed, and whenever the last one took `inline_below_s` or more, the thread does the sync as above. A
deferred commit synced inline is durable earlier than the thread would make it, never later; it is announced
(`Durable`) at the same barrier, and a failed inline sync is raised at the barrier, as the thread's would be.
"""

from __future__ import annotations

import errno
import threading
import time
from collections.abc import Callable, Hashable

from strands_durable.store.weak_calls import weakly

__all__ = ["INLINE_SYNC_BELOW_S", "SyncerThread"]

INLINE_SYNC_BELOW_S = 50e-6  # a sync timed below this is run inline (module docstring); tmpfs: ~0.3 us, ext4: 0.1+ ms
_sync_costs: dict[Hashable, float] = {}  # cost key -> the seconds the last sync timed on a committing thread took


def _object_gone() -> None:
    raise OSError(errno.EBADF, "the session whose journal this syncs was dropped")


def _told_nobody(seq: int) -> None:
    """What the end of a sync tells a session that is gone."""


class SyncerThread:
    def __init__(
        self,
        sync: Callable[[], None],
        on_durable: Callable[[int], None],
        *,
        durable: int,
        name: str,
        idle_s: float = 0.05,
        cost_key: Hashable | None = None,
        inline_below_s: float = 0.0,
    ) -> None:
        """`durable`: the seq already durable; `on_durable(seq)` runs after each successful sync (on the syncer, or
        inline on the requesting thread). `cost_key` names what the sync's cost depends on (None: never inline).
        Bound methods are held weakly (store/weak_calls.py): once their object is gone, a sync fails (nothing can
        wait for it any more) and nothing is told."""
        self._sync = weakly(sync, _object_gone)
        self._cost_key = cost_key
        self._inline_below_s = inline_below_s
        self._on_durable = weakly(on_durable, _told_nobody)
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
        or queued behind the one in flight, or, where syncs are cheap, once it is done (inline)."""
        with self._cond:
            if self._stopped or self._error is not None or seq <= self._requested:
                return
            self._requested = seq
            inline = self._sync_is_cheap()
            if not inline:
                self._hand_over(seq)
        if inline:
            self._sync_inline(seq)

    def _hand_over(self, seq: int) -> None:
        """Give the request to the syncer thread (started if none runs); called holding the lock."""
        if self._thread is None:
            self._thread = self._last = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()
        else:
            self._cond.notify_all()
        if self._syncing:
            return  # the next sync, right after this one, covers it (group commit)
        while self._started < seq and self._durable < seq and self._thread is not None and self._error is None:
            self._cond.wait()  # the handover (module docstring)

    def _sync_is_cheap(self) -> bool:
        if self._cost_key is None:
            return False
        cost = _sync_costs.get(self._cost_key)
        return cost is not None and cost < self._inline_below_s

    def _sync_inline(self, seq: int) -> None:
        """Sync on this thread: `seq` and everything appended before it become durable (a failure is kept for the
        barrier, and ends the syncer as the thread's would)."""
        started = time.perf_counter()
        try:
            self._sync()
        except OSError as exc:
            with self._cond:
                self._error = exc
                self._cond.notify_all()
            return
        self.synced(seq, cost_s=time.perf_counter() - started)
        self._on_durable(seq)

    def synced(self, seq: int, *, cost_s: float | None = None) -> None:
        """`seq` was made durable by a sync outside the syncer thread (a synchronous commit's own fdatasync, or an
        inline one), which took `cost_s` seconds when it was timed."""
        if cost_s is not None and self._cost_key is not None:
            _sync_costs[self._cost_key] = cost_s
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
