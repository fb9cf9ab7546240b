"""A chaos session's processes end without the interpreter walking their heap once more.

At exit CPython's teardown runs the cyclic garbage collector over every object still alive. A chaos process holds
strands-agents, the golden runs and their states, so that walk took ~0.1 s in each pytest-xdist worker, and the
controller waits for every worker to exit before it ends (docs/benchmarks.md). pytest has already collected the
session's garbage by then (and reported unraisable exceptions from it), so at exit `freeze_at_exit` collects the
young generations once more and freezes what survives: teardown frees it by reference counting and skips the walk.
Cycles that only teardown itself turns into garbage are left to the operating system, whose memory it is; CPython
never promises their finalizers run at exit either.
"""

from __future__ import annotations

import atexit
import gc


def _freeze_survivors() -> None:
    gc.collect(1)
    gc.freeze()


def freeze_at_exit() -> None:
    """Freeze the survivors at interpreter exit (an atexit handler registered now runs after those registered
    later, such as strands-agents' telemetry shutdown)."""
    atexit.register(_freeze_survivors)
