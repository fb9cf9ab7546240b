"""Invocation event loops: one per thread, reused and closed with its thread; one thread pool per process; a
crash propagates and leaves nothing running; a forked child gets its own loop and pool."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
import threading

from strands_durable.agent.loop import process_pool, run_on_thread_loop, stop_pool_threads


async def worker_thread() -> int:
    return await asyncio.to_thread(threading.get_ident)


def test_sync_calls_of_successive_loops_run_on_the_same_pool() -> None:
    first = run_on_thread_loop(worker_thread())
    assert first != threading.get_ident()
    assert {run_on_thread_loop(worker_thread()) for _ in range(5)} <= {t.ident for t in threading.enumerate()}
    assert process_pool() is process_pool()


async def running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def test_a_thread_reuses_its_loop_and_closes_it_when_it_ends() -> None:
    assert run_on_thread_loop(running_loop()) is run_on_thread_loop(running_loop())
    loops = []
    thread = threading.Thread(target=lambda: loops.append(run_on_thread_loop(running_loop())))
    thread.start()
    thread.join()
    del thread
    assert loops[0] is not run_on_thread_loop(running_loop())
    assert loops[0].is_closed()


def test_a_crash_inside_the_loop_propagates_and_cancels_what_is_left() -> None:
    left: list[asyncio.Task] = []

    async def crashing() -> None:
        left.append(asyncio.get_running_loop().create_task(asyncio.sleep(60)))  # running when the crash happens
        await asyncio.sleep(0)
        raise KeyboardInterrupt

    try:
        run_on_thread_loop(crashing())
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interrupt was swallowed")
    assert left[0].cancelled()  # the next invocation on this loop does not inherit it
    assert run_on_thread_loop(worker_thread())  # the loop and the pool serve the next invocation


def test_a_forked_child_gets_its_own_pool() -> None:
    run_on_thread_loop(worker_thread())  # the parent's pool has an idle worker now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            ok = run_on_thread_loop(worker_thread()) != 0
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


def test_the_pool_threads_can_be_stopped_before_a_fork() -> None:
    run_on_thread_loop(worker_thread())
    assert any(t.name.startswith("strands-tool") for t in threading.enumerate())
    stop_pool_threads()
    assert not any(t.name.startswith("strands-tool") for t in threading.enumerate())
    assert run_on_thread_loop(worker_thread())  # a new pool serves the next call


def test_the_pool_serves_many_units_waiting_at_once() -> None:
    """Concurrent units' back-off waits and sync tools share one pool: twelve blocked at once all get a thread
    (a pool sized for two cores, six threads, would leave the barrier waiting)."""
    barrier = threading.Barrier(12, timeout=10)
    futures = [process_pool().submit(barrier.wait) for _ in range(12)]
    assert sorted(f.result(timeout=15) for f in futures) == list(range(12))


MAIN_THREAD_INVOCATION = """
import asyncio
from strands_durable.agent.loop import run_on_thread_loop

async def answer():
    return await asyncio.to_thread(lambda: 42)

assert run_on_thread_loop(answer()) == 42
"""


def test_the_main_threads_loop_is_closed_when_the_process_exits() -> None:
    """The main thread never ends before the interpreter's shutdown, where collecting its loop unclosed warns and
    may fail (`Exception ignored in BaseEventLoop.__del__ ... Invalid file descriptor: -1` under `pytest -s`)."""
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-c", MAIN_THREAD_INVOCATION],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
