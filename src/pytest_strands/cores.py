"""One core per pytest-xdist worker of a chaos session, when there are no more workers than cores.

A crash point's runs pass the work from thread to thread one at a time (the runner, its unit and tool threads,
the store's writer and syncer; lockstep lets one unit run at a time), so a worker never keeps two cores busy. Left
free, the kernel wakes each hand-over's thread on whichever core is idle, and with two workers on two cores every
hand-over then waits behind the other worker or migrates: on the 2-core VM the items of `-n 2` spent ~18% of their
time off the CPU that way (docs/benchmarks.md). Pinned, each worker runs its threads on its own core.
"""

from __future__ import annotations

import os

PIN_CHOICES = ("auto", "off")


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
    core; returns the core, or None when it stays unpinned (see `worker_core`, or no affinity on this system)."""
    if not hasattr(os, "sched_setaffinity") or not os.path.isdir("/proc/self/task"):
        return None
    core = worker_core(worker_id, worker_count, list(os.sched_getaffinity(0)))
    if core is None:
        return None
    for thread_id in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(thread_id), {core})
        except ProcessLookupError:  # a thread that ended since the listing
            continue
    return core
