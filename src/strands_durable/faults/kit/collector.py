"""The chaos kit's one process tuning, off unless asked for (`--strands-chaos-freeze-gc`, ini
`strands_chaos_freeze_gc`): the garbage collector held back while a crash point's runs go on.

A point's runs allocate JSON trees by the hundred thousand. Each full collection they trigger walks every object
that lived before them (strands, the golden run and its states) again, and each young collection every young object
still alive. With the tuning on, `points_collected_less` freezes the objects alive before the runs (`gc.freeze`)
and collects the youngest generation every `YOUNG_ALLOCATIONS` allocations instead of every 700; afterwards the
caller's thresholds come back, the runs' garbage is collected and the frozen objects are handed back. It is the only
tuning that showed at least 10% on the serial examples run (docs/benchmarks.md, Chaos plugin); it changes settings
of the whole process it runs in, so it is opt-in. Off, `points_collected_less` changes nothing.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

YOUNG_ALLOCATIONS = 50_000  # bounds a long point's uncollected garbage to a few tens of thousands of objects

_enabled = False


def collect_less_during_points(on: bool) -> None:
    """Turn the tuning on or off for this process (the chaos suite does, from its settings)."""
    global _enabled
    _enabled = on


def collecting_less() -> bool:
    return _enabled


@contextlib.contextmanager
def points_collected_less() -> Iterator[None]:
    """Around one crash point's runs: the tuning when it is on, nothing otherwise."""
    if not _enabled:
        yield
        return
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(YOUNG_ALLOCATIONS, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.collect()  # the runs' own garbage, while the old objects are still frozen (frozen, none of it is freed)
        gc.unfreeze()
