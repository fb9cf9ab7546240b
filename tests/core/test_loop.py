"""Invocation event loops share one thread pool per process, survive their loop closing, and work after fork."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import threading

from strands_durable.agent.loop import process_pool, run_on_new_loop


async def worker_thread() -> int:
    return await asyncio.to_thread(threading.get_ident)


def test_sync_calls_of_successive_loops_run_on_the_same_pool() -> None:
    first = run_on_new_loop(worker_thread())
    assert first != threading.get_ident()
    assert {run_on_new_loop(worker_thread()) for _ in range(5)} <= {t.ident for t in threading.enumerate()}
    assert process_pool() is process_pool()


def test_a_crash_inside_the_loop_propagates_and_cancels_what_is_left() -> None:

    async def crashing() -> None:
        asyncio.get_running_loop().create_task(asyncio.sleep(60))  # left running when the crash happens
        raise KeyboardInterrupt

    try:
        run_on_new_loop(crashing())
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interrupt was swallowed")
    assert run_on_new_loop(worker_thread())  # the pool still serves new loops


def test_a_forked_child_gets_its_own_pool() -> None:
    run_on_new_loop(worker_thread())  # the parent's pool has an idle worker now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            ok = run_on_new_loop(worker_thread()) != 0
            os.write(write, b"ok" if ok else b"no")
        finally:
            os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], 20)
    if not ready:  # the child waits for a worker thread that only exists in the parent
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert ready, "the forked child's sync call never ran"
    assert os.read(read, 2) == b"ok" and os.waitstatus_to_exitcode(status) == 0
