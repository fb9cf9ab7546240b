"""The event loop invocations run on: one per thread, reused, in the calling thread, with one thread pool for the
process's sync tools and one for its concurrent units (whose threads keep their loops from unit to unit).

`asyncio.run` per invocation makes a new loop each time (a self-pipe socket pair and an epoll instance, made and
closed again) and gives it its own default executor, whose first synchronous tool call (Strands runs sync tools
with `asyncio.to_thread`) starts a thread that closing the loop joins: together about 0.6 ms per invocation, a
fifth of a short unit. Here a thread keeps its loop between invocations (as `asyncio.Runner` keeps one between
`run` calls); each invocation's leftover tasks are cancelled before it returns, so invocations share nothing
but the loop. The loop is closed when its thread ends, the main thread's when the process exits (at exit, before
the interpreter's shutdown collects it unclosed). A forked child starts with a new loop and pool: the
parent's worker threads do not exist in the child, and its epoll instance is shared with the parent (closing
it in the child would unregister the parent's descriptors), so the child leaves the inherited ones alone.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import sys
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class _ToProcessPool(ThreadPoolExecutor):
    """Every loop's default executor: hands work to the process's pool, whichever it is now, and ignores
    `shutdown` from a closing loop (asyncio accepts only ThreadPoolExecutor instances; this one never starts a
    thread of its own)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:  # type: ignore[override]
        return process_pool().submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        return None


class _ThreadLoop:
    """A thread's loop; closed when the thread's locals are dropped (the thread ended)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self.loop.set_default_executor(_TO_PROCESS_POOL)

    def __del__(self) -> None:
        if not sys.is_finalizing():
            self.close()

    def close(self) -> None:
        if self.pid == os.getpid() and not self.loop.is_closed() and not self.loop.is_running():
            self.loop.close()


_POOL_THREADS = 64
"""Threads start only when needed. One pool now serves every concurrent unit's sync tools and retry back-off
waits (each loop had a pool of its own before), so it is sized for many units at once, not for the CPU count."""
_UNIT_THREADS = 1024
"""Concurrent units (runner/concurrency.py) run on threads of a second pool, kept between runs with their loops:
a pool per group of units started a thread and a new event loop per unit (with the joins, ~10% of a chaos
exploration's busy time, most of it on the parallel and workflow examples). The group limits how many of its
units run at once; this bound is only a ceiling no workflow reaches (a pool queues work beyond it, and a queued
unit nested in a running one would wait forever)."""
_TO_PROCESS_POOL = _ToProcessPool(max_workers=1)
_pools: dict[str, tuple[int, ThreadPoolExecutor]] = {}
_pool_lock = threading.Lock()
_local = threading.local()
_inherited: list[Any] = []  # loops a forked child inherited: kept, never closed (see the module docstring)


def _named_pool(name: str, max_workers: int) -> ThreadPoolExecutor:
    with _pool_lock:
        held = _pools.get(name)
        if held is None or held[0] != os.getpid():
            held = _pools[name] = (os.getpid(), ThreadPoolExecutor(max_workers, thread_name_prefix=f"strands-{name}"))
        return held[1]


def process_pool() -> ThreadPoolExecutor:
    """The process's pool for synchronous tool calls and waits."""
    return _named_pool("tool", _POOL_THREADS)


def unit_pool() -> ThreadPoolExecutor:
    """The process's pool for concurrent units; each of its threads keeps its event loop between units."""
    return _named_pool("unit", _UNIT_THREADS)


def stop_pool_threads() -> None:
    """End both pools' idle worker threads (before a fork: a child must not inherit threads' locks). The next
    call for a pool starts a new one."""
    with _pool_lock:
        held = list(_pools.values())
        _pools.clear()
    for pid, pool in held:
        if pid == os.getpid():
            pool.shutdown(wait=True)


@atexit.register
def _close_this_threads_loop() -> None:
    """At exit (run on the main thread): close the main thread's loop, which no thread end closes."""
    held: _ThreadLoop | None = getattr(_local, "held", None)
    if held is not None:
        held.close()


def _thread_loop() -> asyncio.AbstractEventLoop:
    held: _ThreadLoop | None = getattr(_local, "held", None)
    if held is not None and held.pid != os.getpid():
        _inherited.append(held)
        held = None
    if held is None or held.loop.is_closed():
        held = _local.held = _ThreadLoop()
    return held.loop


def run_on_thread_loop(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` on this thread's loop, with the process's thread pool as its default executor."""
    loop = _thread_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        _cancel_remaining(loop)


def _cancel_remaining(loop: asyncio.AbstractEventLoop) -> None:
    pending = asyncio.all_tasks(loop)
    if not pending:
        return
    for task in pending:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
