"""One event loop per invocation, in the calling thread, sharing one thread pool across the process.

`asyncio.run` gives every loop its own default executor: the first synchronous tool call of an invocation starts
a thread (Strands runs sync tools with `asyncio.to_thread`) and closing the loop joins it, about 0.45 ms per
invocation. Loops made here use the process's pool instead and leave it running when they close. A forked child
gets a pool of its own (the parent's worker threads do not exist in the child).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class _ProcessPool(ThreadPoolExecutor):
    """A loop's default executor that outlives the loop: `shutdown` from a closing loop is ignored (its idle
    workers end with the interpreter, as every ThreadPoolExecutor's do)."""

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        return None


_pool: tuple[int, _ProcessPool] | None = None
_pool_lock = threading.Lock()


def process_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), _ProcessPool(thread_name_prefix="strands-tool"))
        return _pool[1]


def run_on_new_loop(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`, with the process's thread pool as the loop's default executor."""
    loop = asyncio.new_event_loop()
    loop.set_default_executor(process_pool())
    try:
        return loop.run_until_complete(coro)
    finally:
        try:
            _cancel_remaining(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


def _cancel_remaining(loop: asyncio.AbstractEventLoop) -> None:
    pending = asyncio.all_tasks(loop)
    if not pending:
        return
    for task in pending:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
