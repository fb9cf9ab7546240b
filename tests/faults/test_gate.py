"""The CI gate: every real-fault class at its `gate` bounds over every example (examples/*.strands.yaml) and
every chaos scenario (chaos/scenarios/), through the same soak the `strands chaos` command runs. Zero is the bar.

Sized on purpose: one test per (spec, fault class), 8 specs x 6 classes = 48 items of a few seconds each, so
pytest-xdist spreads them over the cores and progress shows as they finish (one test per spec ran up to a
minute in silence). Every class still explores every spec at its gate bounds; nothing is sampled away."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable.faults.classes.registry import FAULT_CLASSES
from strands_durable.faults.soak import soak
from tests.conftest import EXAMPLES, REPO

SPECS = sorted(EXAMPLES.glob("*.strands.yaml")) + sorted((REPO / "chaos" / "scenarios").glob("*.strands.yaml"))


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULT_CLASSES)
@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name.removesuffix(".strands.yaml"))
def test_every_fault_class_gate_over_the_examples(spec: Path, fault: str, tmp_path: Path) -> None:
    result = soak([spec], faults=[fault], budget_s=600, workdir=tmp_path, progress=False, max_rounds=1)
    assert result.totals()[fault]["crash_points"] > 0, result.totals()
    assert result.passed, "\n".join(result.summary_lines())
