"""The pattern state a session stores (what `strands sessions show` prints and a resume starts from) ends the
same whether the run was interrupted or not: a crash at any unit boundary, then a resume, leaves the final
`pattern_state` of the uninterrupted run. (The judge's "identical" does not cover it, so this test does.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from strands_durable import InjectedCrash, LocalStore, RunOptions, resume, run_workflow
from strands_durable.faults.kit.oracle import RequestLog
from tests.conftest import EXAMPLES
from tests.core.support import ExecutionLog, counted_options, crash_at, golden_run

SPECS = sorted(p for p in EXAMPLES.glob("*.strands.yaml") if not p.name.startswith("chain-"))


def _options(root: Path, **kwargs: Any) -> RunOptions:
    """The kit's counting tools (a fixed clock), seeded model and HITL defaults, so two runs can be compared."""
    return counted_options(
        ExecutionLog(root / "exec.log"), RequestLog(), out_dir=root / "out", hitl_use_defaults=True, **kwargs
    )


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name.removesuffix(".strands.yaml"))
def test_a_crash_at_a_unit_boundary_resumes_to_the_uninterrupted_pattern_state(spec: Path, tmp_path: Path) -> None:
    golden = golden_run(tmp_path / "points", spec)
    boundaries = [p.id for p in golden.points if p.point.site in ("unit.before", "unit.after")]

    store = LocalStore(tmp_path / "golden" / "sessions")
    uninterrupted = run_workflow(spec, _options(tmp_path / "golden"), store=store, session_id="s")
    expected = store.load(uninterrupted.session_id).pattern_state

    differences = []
    for index, point in enumerate(boundaries):
        root = tmp_path / f"run{index}"
        with pytest.raises(InjectedCrash):
            run_workflow(
                spec, _options(root, crash_points=crash_at(point)), store=LocalStore(root / "sessions"), session_id="s"
            )
        resumed = resume("s", _options(root), store=LocalStore(root / "sessions"))
        assert resumed.status == "completed", point
        state = LocalStore(root / "sessions").load("s").pattern_state
        if state != expected:
            differences.append(
                f"{point}: {sorted(k for k in expected.keys() | state.keys() if state.get(k) != expected.get(k))}"
            )
    assert not differences, differences
