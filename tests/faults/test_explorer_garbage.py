"""What a crash point's runs leave for the cyclic collector: after a resume, the run's crash-point bus lets go of its
subscribers (closures over the phase and the store) and the run's store wrapper of its sessions, and a session's
helper threads hold it weakly; so no session, bus or store of a finished run waits in a cycle for a collection
(each full collection of a run walks whatever waits: on the examples, 213 objects per point became 50)."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from strands_durable.faults.classes.explore import iter_points
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from tests.conftest import EXAMPLES
from tests.faults.test_explorer_work import garbage_of_points

_RUN_OBJECTS = {"LocalSession", "CrashPoints", "WrappingStore", "WrappedSession", "WriterThread", "SyncerThread"}


def test_a_crash_points_runs_leave_no_session_bus_or_store_in_a_cycle(tmp_path: Path) -> None:
    golden = run_golden(ChaosTarget(EXAMPLES / "chain-research.strands.yaml"), tmp_path / "golden")
    ids = list(iter_points(golden))[:24]
    garbage = garbage_of_points(golden, ids, tmp_path / "points")
    left = sorted({type(o).__name__ for o in garbage} & _RUN_OBJECTS)
    assert not left, f"{left} in cycles after {len(ids)} points ({len(garbage)} objects in all)"


def _closures(garbage: list[object]) -> dict[str, int]:
    """The functions in `garbage` by qualified name and module: a closure in a cycle names what made the cycle."""
    found: dict[str, int] = {}
    for o in garbage:
        if isinstance(o, types.FunctionType):
            name = f"{o.__module__}.{o.__qualname__}"
            found[name] = found.get(name, 0) + 1
    return found


@pytest.mark.parametrize("example", ["routing-support-triage", "parallel-market-scan"])
def test_a_crash_points_runs_leave_no_closure_but_the_views_json_encoders_in_a_cycle(
    tmp_path: Path, example: str
) -> None:
    """Every agent built, every model stream and every calculator call used to leave a cycle: the SDK's nested
    `add_tool` (a closure over itself and the tool registry), the stream watcher's timer (a closure over its own
    handle, dropped unfired by a loop closed after a crash) and the arithmetic walker (a nested function calling
    itself). What is left is the stdlib's indenting JSON encoder of the session's views (its nested functions
    call each other), a few objects per point (59 per point of the examples before, 5.5 after)."""
    golden = run_golden(ChaosTarget(EXAMPLES / f"{example}.strands.yaml"), tmp_path / "golden")
    ids = list(iter_points(golden))[:30]
    garbage = garbage_of_points(golden, ids, tmp_path / "points")
    closures = _closures(garbage)
    assert {name for name in closures if not name.startswith("json.encoder.")} == set(), closures
    encoders = sum(1 for o in garbage if isinstance(o, json.JSONEncoder))
    assert len(garbage) <= 40 * encoders, f"{len(garbage)} objects in cycles after {len(ids)} points: {closures}"
