"""A pytest plugin for `bench_chaos.py --xdist` and `--whole` (loaded with `-p xdist_probe`): each process of a
chaos run (the serial process, or the xdist controller and each worker) appends one JSON line to the file named by
`BENCH_XDIST_PROBE`: its CPU seconds when its first item started (the controller: when the first worker said so),
in its `schedules` items, in the call phase of its other items (their runs; the rest of the items' CPU is pytest's
own per-item work and the plugins' hooks), in the cyclic garbage collector (wherever its passes fell, from this
plugin's load on), and at its unconfigure. What comes after unconfigure (pytest's clean-up collections, the
interpreter's exit) is the rest of the run's total, which the bench takes from the children's rusage."""

from __future__ import annotations

import gc
import json
import os
import resource
import time
from collections.abc import Generator
from typing import Any

import pytest

_first_item_cpu: float | None = None
_schedules_cpu = 0.0  # CPU seconds in the `schedules` items (hypothesis's multi-fault schedules)
_calls_cpu = 0.0  # CPU seconds in the call phase of the other items
_item_start_cpu = 0.0
_collector_cpu = 0.0  # CPU seconds in the collector's passes
_collection_started = 0.0


def _collecting(phase: str, info: dict[str, int]) -> None:
    """A collector pass runs in the thread that set it off, one at a time: its thread's CPU is the pass's."""
    global _collection_started, _collector_cpu
    if phase == "start":
        _collection_started = time.thread_time()
    else:
        _collector_cpu += time.thread_time() - _collection_started


gc.callbacks.append(_collecting)


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def pytest_runtest_logstart(nodeid: str, location: object) -> None:
    global _first_item_cpu, _item_start_cpu
    _item_start_cpu = _cpu()
    if _first_item_cpu is None:
        _first_item_cpu = _item_start_cpu


def pytest_runtest_logfinish(nodeid: str, location: object) -> None:
    global _schedules_cpu
    if nodeid.endswith("::schedules"):
        _schedules_cpu += _cpu() - _item_start_cpu


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: Any) -> Generator[None, Any, Any]:
    global _calls_cpu
    start = _cpu()  # all threads: an item's agents run on threads of their own
    try:
        return (yield)
    finally:
        if not item.nodeid.endswith("::schedules"):
            _calls_cpu += _cpu() - start


def pytest_unconfigure(config: object) -> None:
    if _collecting in gc.callbacks:
        gc.callbacks.remove(_collecting)
    path = os.environ.get("BENCH_XDIST_PROBE")
    if not path:
        return
    process = os.environ.get("PYTEST_XDIST_WORKER") or ("controller" if _is_controller(config) else "serial")
    line = {
        "process": process,
        "first_item_cpu": _first_item_cpu,
        "schedules_cpu": _schedules_cpu,
        "calls_cpu": _calls_cpu,
        "collector_cpu": _collector_cpu,
        "unconfigure_cpu": _cpu(),
    }
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def _is_controller(config: object) -> bool:
    option = getattr(config, "option", None)
    return bool(getattr(option, "numprocesses", None))
