"""A chaos session's processes end without the interpreter walking their heap once more, and the xdist controller
does its last imports while it waits for the workers.

At exit CPython's teardown runs the cyclic garbage collector over every object still alive. A chaos process holds
strands-agents, the golden runs and their states, so that walk took ~0.1 s in each pytest-xdist worker, and the
controller waits for every worker to exit before it ends (docs/benchmarks.md). pytest has already collected the
session's garbage by then (and reported unraisable exceptions from it), so at exit `freeze_at_exit` collects the
young generations once more and freezes what survives: teardown frees it by reference counting and skips the walk.
Cycles that only teardown itself turns into garbage are left to the operating system, whose memory it is; CPython
never promises their finalizers run at exit either.

The xdist controller runs no test, yet its end imports two things: hypothesis' pytest plugin imports hypothesis in
every process's terminal summary (~70-110 ms), and removing the suite's scratch directory imports the store's file
operations (the whole store package, ~30-55 ms). Done last, both lie on the session's critical path. `EndImports`
imports them as soon as the first worker has finished, when a core is free, on a thread of their own: the
controller's loop must still answer the other worker, which keeps one item in hand and runs its last only once
the controller has said there is no next (imported on the loop's thread, they held that worker ~80-120 ms).

A worker imports hypothesis in its terminal summary too, unless one of its items (a workflow's `schedules`) did: on
the worker that ran none, ~70 ms after its last item, on the critical path. `EndImports` on a worker imports it as
soon as the worker has sent its collection: the controller deals items to the workers as they free up, so the
cost is shared out like any item's, not added to one worker's end.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import sys
import threading
from typing import Any

import pytest


def _freeze_survivors() -> None:
    gc.collect(1)
    gc.freeze()


def freeze_at_exit() -> None:
    """Freeze the survivors at interpreter exit (an atexit handler registered now runs after those registered
    later, such as strands-agents' telemetry shutdown)."""
    atexit.register(_freeze_survivors)


class EndImports:
    """Imports the modules a pytest-xdist process's end will import (`modules`, in order), on a thread joined when
    the session finishes: on the controller once the first worker is down, on a worker once it has sent its
    collection (after xdist's own hook)."""

    def __init__(self, modules: list[str]) -> None:
        self.modules = modules
        self._thread: threading.Thread | None = None

    def _import(self) -> None:
        for name in self.modules:
            if name not in sys.modules:
                with contextlib.suppress(ImportError):  # where it is used it fails the same way: not ours to say
                    importlib.import_module(name)

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._import, name="strands-chaos-end-imports", daemon=True)
            self._thread.start()

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        self._start()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if hasattr(session.config, "workerinput"):
            self._start()  # the worker that collected first waits for the other's collection meanwhile

    def pytest_sessionfinish(self) -> None:
        if self._thread is not None:  # before the terminal summary and the unconfigure that use the modules
            self._thread.join()
