"""A pytest plugin for `bench_chaos.py --xdist` and `--whole` (loaded with `-p xdist_probe`): each process of a
chaos run (the serial process, or the xdist controller and each worker) appends one JSON line to the file named by
`BENCH_XDIST_PROBE`: its CPU seconds when its first item started (the controller: when the first worker said so),
in its `schedules` items, and at its unconfigure. What comes after unconfigure (pytest's clean-up collections, the
interpreter's exit) is the rest of the run's total, which the bench takes from the children's rusage."""

from __future__ import annotations

import json
import os
import resource

_first_item_cpu: float | None = None
_schedules_cpu = 0.0  # CPU seconds in the `schedules` items (hypothesis's multi-fault schedules)
_item_start_cpu = 0.0


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


def pytest_unconfigure(config: object) -> None:
    path = os.environ.get("BENCH_XDIST_PROBE")
    if not path:
        return
    process = os.environ.get("PYTEST_XDIST_WORKER") or ("controller" if _is_controller(config) else "serial")
    line = {
        "process": process,
        "first_item_cpu": _first_item_cpu,
        "schedules_cpu": _schedules_cpu,
        "unconfigure_cpu": _cpu(),
    }
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def _is_controller(config: object) -> bool:
    option = getattr(config, "option", None)
    return bool(getattr(option, "numprocesses", None))
