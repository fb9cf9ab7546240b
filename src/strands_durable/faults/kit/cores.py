"""Chaos runs on one core: a crash point's runs while it is explored (`one_core`), and a whole pytest-xdist
worker when there are no more workers than cores (`pin_worker`).

A point's runs hand the work from thread to thread one at a time (the runner, the agent's event-loop thread, tool
and unit threads, the store's syncer and writer); nothing of a point ever keeps two cores busy. Left free to use
every core, each hand-over wakes its thread on whichever core is idle, and the wake-up across cores costs more than
the work handed over: on the 2-core VM a serial exploration of the examples ran ~15% faster on one core
(docs/benchmarks.md). `one_core` narrows every thread of the process, and so every thread started meanwhile
(Linux threads inherit their creator's mask), to the core the caller is running on, and gives the masks back
afterwards. Under pytest-xdist each worker is pinned for good instead (two workers on two cores left free spent ~18%
of their items' time waiting for a core or migrating), and `one_core` then finds nothing to narrow.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

PIN_CHOICES = ("auto", "off")  # `--strands-chaos-pin-workers`
_narrowing = {"enabled": True}  # off: `--strands-chaos-pin-workers=off` leaves every thread to the kernel


def allow_narrowing(enabled: bool) -> None:
    """Turn `one_core` on or off for this process (the chaos plugin's `--strands-chaos-pin-workers`)."""
    _narrowing["enabled"] = enabled


def current_core() -> int | None:
    """The core the calling thread last ran on (Linux: field 39 of /proc/thread-self/stat), or None."""
    try:
        with open("/proc/thread-self/stat", "rb") as fh:
            stat = fh.read()
        return int(stat[stat.rindex(b")") + 2 :].split()[36])  # the fields after the command name start at field 3
    except (OSError, ValueError, IndexError):
        return None


def _threads() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/task")]
    except OSError:
        return []


def _set_mask(thread_id: int, cores: set[int]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # a thread that ended since the listing
        os.sched_setaffinity(thread_id, cores)


@contextlib.contextmanager
def one_core() -> Iterator[int | None]:
    """Run the block on one of the cores the calling thread may use, with every thread of the process (the
    pools' threads started before, such as the SDK's tool thread, and those started meanwhile); yields that core,
    or None when nothing was narrowed (one core allowed already, or no affinity control on this system). Each
    thread gets its mask back afterwards; threads started inside get the calling thread's."""
    if not hasattr(os, "sched_setaffinity") or not _narrowing["enabled"]:
        yield None
        return
    allowed = os.sched_getaffinity(0)
    if len(allowed) < 2:
        yield None
        return
    core = current_core()
    if core not in allowed:
        core = min(allowed)
    masks: dict[int, set[int]] = {}
    for thread_id in _threads():
        try:
            masks[thread_id] = os.sched_getaffinity(thread_id)
        except ProcessLookupError:
            continue
    try:
        os.sched_setaffinity(0, {core})
    except OSError:
        yield None
        return
    for thread_id in masks:
        _set_mask(thread_id, {core})
    try:
        yield core
    finally:
        for thread_id in _threads():
            _set_mask(thread_id, masks.get(thread_id, allowed))
        os.sched_setaffinity(0, allowed)


@contextlib.contextmanager
def batch_scheduled() -> Iterator[bool]:
    """Run the block with every thread of the process that has the normal policy (SCHED_OTHER) under SCHED_BATCH,
    and so every thread started meanwhile (Linux threads inherit their creator's policy); yields whether it did.

    A batch thread that wakes another does not give up the core to it at once: the woken thread runs when the
    waker blocks or its time slice ends, which is when a crash point's runs hand work over anyway, so a hand-over
    costs one switch instead of a switch there and back (docs/benchmarks.md). Each thread gets its own policy back
    afterwards, threads started inside the calling thread's. Off with `allow_narrowing(False)`, like `one_core`."""
    if not hasattr(os, "SCHED_BATCH") or not _narrowing["enabled"]:
        yield False
        return
    normal = os.sched_param(0)
    try:
        own = os.sched_getscheduler(0)
    except OSError:
        yield False
        return
    if own != os.SCHED_OTHER:
        yield False  # a real-time, idle or batch caller keeps what it chose
        return
    before = _threads()
    changed = {tid for tid in before if _policy(tid) == os.SCHED_OTHER}
    for thread_id in changed:
        _set_policy(thread_id, os.SCHED_BATCH, normal)
    try:
        yield True
    finally:
        started = set(_threads()).difference(before)  # they inherited the batch policy from the calling thread
        for thread_id in changed | started:
            _set_policy(thread_id, os.SCHED_OTHER, normal)


def _policy(thread_id: int) -> int | None:
    try:
        return os.sched_getscheduler(thread_id)
    except OSError:  # a thread that ended since the listing
        return None


def _set_policy(thread_id: int, policy: int, param: os.sched_param) -> None:
    with contextlib.suppress(OSError):  # a thread that ended since the listing
        os.sched_setscheduler(thread_id, policy, param)


def worker_core(worker_id: str, worker_count: int, cores: list[int]) -> int | None:
    """The core worker `gwN` of `worker_count` runs on: the N-th of the cores this process may use, or None
    (not pinned) when there are more workers than cores or the id is not xdist's."""
    if not worker_id.startswith("gw") or not worker_id[2:].isdigit():
        return None
    index = int(worker_id[2:])
    if worker_count > len(cores) or index >= len(cores):
        return None
    return sorted(cores)[index]


def pin_worker(worker_id: str, worker_count: int) -> int | None:
    """Pin every thread of this process (and so the threads and child processes it starts later) to the worker's
    core for good; returns the core, or None when it stays unpinned (see `worker_core`, or no affinity control)."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    core = worker_core(worker_id, worker_count, list(os.sched_getaffinity(0)))
    if core is None:
        return None
    for thread_id in _threads():
        _set_mask(thread_id, {core})
    return core
