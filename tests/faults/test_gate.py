"""The CI gate: every real-fault class at its `gate` bounds over every example (examples/*.strands.yaml) and
every chaos scenario (chaos/scenarios/), through the same soak the `strands chaos` command runs. Zero is the bar."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable.faults.real import FAULT_CLASSES
from strands_durable.faults.soak import soak
from tests.conftest import EXAMPLES, REPO

SPECS = sorted(EXAMPLES.glob("*.strands.yaml")) + sorted((REPO / "chaos" / "scenarios").glob("*.strands.yaml"))


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_every_fault_class_gate_over_the_examples(spec: Path, tmp_path: Path) -> None:
    result = soak([spec], faults=list(FAULT_CLASSES), budget_s=600, workdir=tmp_path, progress=False, max_rounds=1)
    totals = result.totals()
    assert set(totals) == set(FAULT_CLASSES)
    assert all(totals[fault]["crash_points"] > 0 for fault in FAULT_CLASSES), totals
    assert result.passed, "\n".join(result.summary_lines())
