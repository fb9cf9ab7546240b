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
from collections.abc import AsyncIterable, AsyncIterator
from typing import TypeVar

T = TypeVar("T")
POLL_S = 0.05
_interrupting: set[asyncio.Task[object]] = set()  # tasks one watcher is cancelling (nested wrappers share one)


async def until_cancelled(events: AsyncIterable[T], cancel_signal: threading.Event | None) -> AsyncIterator[T]:
    """Yield `events` until `cancel_signal` is set, interrupting a pending await when it is."""
    if cancel_signal is None:
        async for event in events:
            yield event
        return
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    iterator = events.__aiter__()
    waiting = interrupted = False

    def check() -> None:
        """A timer, not a task: polling costs no task per call (three wrappers nest per model call, and a loop
        cancels every task left when an invocation ends)."""
        nonlocal interrupted, timer
        if task is None or task.done():
            return  # the call ended without closing this stream (a crash): nothing left to interrupt
        if not cancel_signal.is_set():
            timer = loop.call_later(POLL_S, check)
        elif waiting and task not in _interrupting:
            _interrupting.add(task)
            interrupted = True
            task.cancel()

    timer = loop.call_later(POLL_S, check)
    try:
        while not cancel_signal.is_set():
            waiting = True
            try:
                event = await iterator.__anext__()
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                if not interrupted:
                    raise
                _interrupting.discard(task)  # type: ignore[arg-type]
                if hasattr(task, "uncancel"):
                    task.uncancel()  # type: ignore[union-attr]
                return
            finally:
                waiting = False
            yield event
    finally:
        timer.cancel()
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()
