"""`until_cancelled`: a model stream that honours the SDK's `cancel_signal` while a call is in flight.

Strands checks its cancel signal only between stream chunks, so a slow provider (or our models' latency) would
finish the call before a Ctrl+C is seen. Every model we ship streams through this: when the signal is set, the
await in flight is interrupted within about `POLL_S` and the stream ends without `messageStop`, which the SDK
reports as a cancelled call (its "Cancelled by user" message, which the durable agent never commits).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import AsyncIterable, AsyncIterator
from typing import TypeVar

T = TypeVar("T")
POLL_S = 0.05
_interrupting: set[asyncio.Task[object]] = set()  # tasks one watcher is cancelling (nested wrappers share one)


class _Watch:
    """One stream's watch over its cancel signal, polled by a timer, not a task: polling costs no task per call
    (three wrappers nest per model call, and a loop cancels every task left when an invocation ends). The timer
    holds the watch weakly: a handle holding it (or a closure over it) while it holds the handle is a cycle, left
    for the collector whenever the loop dropped a timer that never fired (a loop closed at the end of a crashed
    invocation)."""

    __slots__ = ("__weakref__", "interrupted", "loop", "signal", "task", "timer", "waiting")

    def __init__(self, signal: threading.Event) -> None:
        self.task = asyncio.current_task()
        self.loop = asyncio.get_running_loop()
        self.signal = signal
        self.waiting = self.interrupted = False
        self.timer = self.loop.call_later(POLL_S, _poll, weakref.ref(self))

    def check(self) -> None:
        task = self.task
        if task is None or task.done():
            return  # the call ended without closing this stream (a crash): nothing left to interrupt
        if not self.signal.is_set():
            self.timer = self.loop.call_later(POLL_S, _poll, weakref.ref(self))
        elif self.waiting and task not in _interrupting:
            _interrupting.add(task)
            self.interrupted = True
            task.cancel()


def _poll(watch: weakref.ref[_Watch]) -> None:
    alive = watch()
    if alive is not None:
        alive.check()


async def until_cancelled(events: AsyncIterable[T], cancel_signal: threading.Event | None) -> AsyncIterator[T]:
    """Yield `events` until `cancel_signal` is set, interrupting a pending await when it is."""
    if cancel_signal is None:
        async for event in events:
            yield event
        return
    iterator = events.__aiter__()
    watch = _Watch(cancel_signal)
    try:
        while not cancel_signal.is_set():
            watch.waiting = True
            try:
                event = await iterator.__anext__()
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                if not watch.interrupted:
                    raise
                task = watch.task
                _interrupting.discard(task)  # type: ignore[arg-type]
                if hasattr(task, "uncancel"):
                    task.uncancel()  # type: ignore[union-attr]
                return
            finally:
                watch.waiting = False
            yield event
    finally:
        watch.timer.cancel()
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()
