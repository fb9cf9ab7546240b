"""What a crash point's runs leave for the cyclic collector: after a resume, the run's crash-point bus lets go of its
subscribers (closures over the phase and the store) and the run's store wrapper of its sessions, and a session's
helper threads hold it weakly; so no session, bus or store of a finished run waits in a cycle for a collection
(each full collection of a run walks whatever waits: on the examples, 213 objects per point became 50)."""

from __future__ import annotations

from pathlib import Path

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
