"""Per example spec: a crash at every unit boundary (`unit.before` / `unit.after`, found by a golden run) and a
resume in fresh objects give the uninterrupted run: identical outputs, histories, artifacts and tokens, no
committed model turn requested again, no committed tool executed again."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.core.support import crash_and_resume, golden_run

SPECS = sorted(p for p in EXAMPLES.glob("*.strands.yaml") if not p.name.startswith("chain-"))


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name.removesuffix(".strands.yaml"))
def test_crash_at_every_unit_boundary_resumes_to_the_uninterrupted_run(spec: Path, tmp_path: Path) -> None:
    golden = golden_run(tmp_path / "golden", spec)  # HITL steps take their defaults under the kit
    targets = [p.id for p in golden.points if p.point.site in ("unit.before", "unit.after")]
    assert len(targets) >= 4, targets
    failures = []
    for index, target in enumerate(targets):
        failures += [f"{target}: {p}" for p in crash_and_resume(golden, target, tmp_path / f"p{index}")]
    assert not failures, "\n".join(failures[:20])


CONCURRENT = [EXAMPLES / "parallel-market-scan.strands.yaml"]


@pytest.mark.slow
@pytest.mark.parametrize("spec", CONCURRENT, ids=lambda p: p.name.removesuffix(".strands.yaml"))
def test_crash_at_every_point_of_concurrent_units_resumes_to_the_uninterrupted_run(spec: Path, tmp_path: Path) -> None:
    """Model, tool and store points too, while sibling units run in other threads."""
    golden = golden_run(tmp_path / "golden", spec)
    assert {"model.before", "model.answered", "tool.executed", "store.before_commit"} <= golden.site_kinds
    failures = []
    for index, target in enumerate(golden.point_ids):
        failures += [f"{target}: {p}" for p in crash_and_resume(golden, target, tmp_path / f"p{index}")]
    assert not failures, "\n".join(failures[:20])
