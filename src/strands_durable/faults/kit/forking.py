"""Real child processes forked from a warm parent (strands already imported), for the kill and concurrent faults.

A child runs one function and leaves with `os._exit` on every path (no atexit handlers, no pytest teardown, no
flushing of the parent's buffers). The parent must not hold a session or lease open while forking: a forked
child shares the parent's open file descriptions, so its flock would be the parent's. `fork_child` refuses to
fork while other threads run (a forked child would inherit their locks in whatever state they were in), and
freezes the parent's objects across the fork so the child's garbage collector does not touch (and copy) every
page of the warm heap. `wait_child` wakes on a pidfd the moment the child ends. No child outlives the wait for
it: on Linux it dies with its parent, and a wait that ends in an exception kills and reaps it.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from strands_durable.agent.loop import stop_pool_threads
from strands_durable.errors import exit_code_for

CHILD_CRASHED = 70  # an exception that is not a DurableError escaped the child's function
THREADS_END_WITHIN_S = 5.0  # a thread still ending (a closed session's writer, a lease renewer) gets this long


def _wait_for_other_threads(within_s: float) -> None:
    """Wait for the threads other than this one to end (each joined, `within_s` in all); RuntimeError naming those
    still running after it."""
    deadline = time.monotonic() + within_s
    for thread in threading.enumerate():
        if thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))
    others = sorted(t.name for t in threading.enumerate() if t is not threading.current_thread())
    if others:
        raise RuntimeError(
            f"refusing to fork while other threads run (their locks would be inherited): {', '.join(others)}"
        )


@dataclass(frozen=True)
class ChildExit:
    """How a child ended: `code` for a normal exit, `signal` when a signal killed it."""

    code: int | None
    signal: int | None

    def describe(self) -> str:
        if self.signal is not None:
            return f"killed by {signal.Signals(self.signal).name}"
        return f"exit {self.code}"


def fork_child(
    body: Callable[[], int | None],
    *,
    env: dict[str, str] | None = None,
    quiet: bool = True,
    witness: list[str] | None = None,
) -> int:
    """Fork; the child runs `body` and exits with its return value (or the exit code of what it raised).
    `witness` receives the names of the other threads alive at the moment of the fork (none: it is refused else)."""
    stop_pool_threads()  # idle workers of the sync-tool pool are threads too
    _wait_for_other_threads(THREADS_END_WITHIN_S)
    if witness is not None:
        witness.extend(t.name for t in threading.enumerate() if t is not threading.current_thread())
    outer_freeze = gc.get_freeze_count()  # a caller's own freeze (the explorer's) is left as it was
    die_with_parent, parent = _parent_death_signal(), os.getpid()
    gc.freeze()  # the parent's objects leave the collector's reach in the child: no copy-on-write of all pages
    pid = os.fork()
    if pid:
        if not outer_freeze:
            gc.unfreeze()
        return pid
    code = CHILD_CRASHED
    try:
        if die_with_parent is not None and (die_with_parent() != 0 or os.getppid() != parent):
            return  # the parent is gone already (the `finally` leaves)
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        if quiet:  # injected failures make the SDK log errors; the parent judges outcomes, not logs
            logging.disable(logging.CRITICAL)
        if env:
            os.environ.update(env)
        result = body()
        code = 0 if result is None else int(result)
    except BaseException as exc:  # every path ends in os._exit: a child never returns into the parent's code
        code = exit_code_for(exc) if not isinstance(exc, (SystemExit,)) else int(exc.code or 0)
    finally:
        os._exit(code)


_PR_SET_PDEATHSIG = 1


@functools.cache
def _parent_death_signal() -> Callable[[], int] | None:
    """Linux: a call that makes the calling process receive SIGKILL when its parent ends, so a child never outlives
    the process that would wait for it (a forked worker killed at the end of a session leaves no kill child of
    its own writing on into a scratch directory being removed). None elsewhere. Resolved once, in the parent."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    return functools.partial(prctl, _PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def wait_child(pid: int, timeout: float = 120.0) -> ChildExit:
    """Wait for a child; one that outlives `timeout` is killed (and reported as killed by SIGKILL). Where the
    kernel has pidfds the wait wakes the moment the child ends (a poll's sleep would add milliseconds a child).
    A wait that ends in an exception (Ctrl+C) kills and reaps the child first: it must not go on writing into
    scratch directories its parent is about to remove."""
    with reaped_on_error(pid):
        return _wait_child(pid, timeout)


@contextlib.contextmanager
def reaped_on_error(pid: int) -> Iterator[None]:
    """An exception in the block (Ctrl+C while the parent waits, sleeps or reads from the child) kills and reaps
    child `pid` before it goes on: the child must not outlive its parent's interest in it."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(ChildProcessError):  # already reaped when the exception came after a wait
            end_child(pid)
        raise


def end_child(pid: int) -> ChildExit:
    """Kill a child with SIGKILL (if it still runs) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return _decode(status)


def _wait_child(pid: int, timeout: float) -> ChildExit:
    descriptor = _pidfd(pid)
    if descriptor is not None:
        try:
            ready, _, _ = select.select([descriptor], [], [], timeout)
        finally:
            os.close(descriptor)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        return _decode(status)
    deadline = time.monotonic() + timeout
    pause = 0.0002
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return _decode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            return _decode(status)
        time.sleep(pause)
        pause = min(pause * 2, 0.01)


def poll_child(pid: int) -> ChildExit | None:
    """How a child ended, without waiting: None while it runs (once it has ended, it is reaped here)."""
    done, status = os.waitpid(pid, os.WNOHANG)
    return _decode(status) if done else None


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when the child ends (Linux 5.3+), or None where there is none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _decode(status: int) -> ChildExit:
    if os.WIFSIGNALED(status):
        return ChildExit(None, os.WTERMSIG(status))
    return ChildExit(os.WEXITSTATUS(status), None)


def run_in_child(
    body: Callable[[], int | None], *, env: dict[str, str] | None = None, timeout: float = 120.0
) -> ChildExit:
    return wait_child(fork_child(body, env=env), timeout)
