"""The runs of one crash point on one core.

A point's runs hand the work from thread to thread one at a time (the runner, the agent's event-loop thread, tool
and unit threads, the store's syncer and writer); nothing of a point ever keeps two cores busy. Left free to use
every core, each hand-over wakes its thread on whichever core is idle, and the wake-up across cores costs more than
the work handed over: on the 2-core VM a serial exploration of the examples ran ~15% faster on one core
(docs/benchmarks.md). `one_core` narrows every thread of the process, and so every thread started meanwhile
(Linux threads inherit their creator's mask), to the core the caller is running on, and gives the masks back
afterwards.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

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
