"""The runs of one crash point on one core.

A point's runs hand the work from thread to thread one at a time (the runner, the agent's event-loop thread, tool
and unit threads, the store's syncer and writer); nothing of a point ever keeps two cores busy. Left free to use
every core, each hand-over wakes its thread on whichever core is idle, and the wake-up across cores costs more than
the work handed over: on the 2-core VM a serial exploration of the examples ran ~15% faster on one core
(docs/benchmarks.md). `one_core` narrows the calling thread, and so every thread it starts meanwhile (Linux threads
inherit their creator's mask), to the core it is running on, and gives the old mask back afterwards.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


def current_core() -> int | None:
    """The core the calling thread last ran on (Linux: field 39 of /proc/thread-self/stat), or None."""
    try:
        with open("/proc/thread-self/stat", "rb") as fh:
            stat = fh.read()
        return int(stat[stat.rindex(b")") + 2 :].split()[36])  # the fields after the command name start at field 3
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def one_core() -> Iterator[int | None]:
    """Run the block, and the threads it starts, on one of the cores this thread may use; yields that core, or
    None when nothing was narrowed (one core allowed already, or no affinity control on this system)."""
    if not hasattr(os, "sched_setaffinity"):
        yield None
        return
    allowed = os.sched_getaffinity(0)
    if len(allowed) < 2:
        yield None
        return
    core = current_core()
    if core not in allowed:
        core = min(allowed)
    try:
        os.sched_setaffinity(0, {core})
    except OSError:
        yield None
        return
    try:
        yield core
    finally:
        os.sched_setaffinity(0, allowed)
