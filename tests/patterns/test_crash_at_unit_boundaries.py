"""Per example spec: a crash at every unit boundary (`unit.before` / `unit.after`, found by a golden run) and a
resume in fresh objects give the uninterrupted run: identical outputs, histories, artifacts and tokens, no
committed model turn requested again, no committed tool executed again."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable.faults.oracle import comparable, first_difference
from tests.conftest import EXAMPLES
from tests.core.support import crash_and_resume, golden_run

SPECS = sorted(p for p in EXAMPLES.glob("*.strands.yaml") if not p.name.startswith("chain-"))


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name.removesuffix(".strands.yaml"))
def test_crash_at_every_unit_boundary_resumes_to_the_uninterrupted_run(spec: Path, tmp_path: Path) -> None:
    golden, points = golden_run(tmp_path / "golden", spec, hitl_use_defaults=True)
    targets = [p for p in points if p.rsplit("/", 1)[-1].split("#")[0] in ("unit.before", "unit.after")]
    assert len(targets) >= 4, targets
    failures = []
    for index, target in enumerate(targets):
        problems, final = crash_and_resume(tmp_path / f"p{index}", target, spec, hitl_use_defaults=True)
        difference = first_difference(golden, comparable(final))
        if difference:
            problems.append(f"differs from the uninterrupted run at {difference}")
        failures += [f"{target}: {p}" for p in problems]
    assert not failures, "\n".join(failures[:20])


CONCURRENT = [EXAMPLES / "parallel-market-scan.strands.yaml"]


@pytest.mark.slow
@pytest.mark.parametrize("spec", CONCURRENT, ids=lambda p: p.name.removesuffix(".strands.yaml"))
def test_crash_at_every_point_of_concurrent_units_resumes_to_the_uninterrupted_run(spec: Path, tmp_path: Path) -> None:
    """Model, tool and store points too, while sibling units run in other threads."""
    golden, points = golden_run(tmp_path / "golden", spec, hitl_use_defaults=True)
    sites = {p.rsplit("/", 1)[-1].split("#")[0] for p in points}
    assert {"model.before", "model.answered", "tool.executed", "store.before_commit"} <= sites
    failures = []
    for index, target in enumerate(points):
        problems, final = crash_and_resume(tmp_path / f"p{index}", target, spec, hitl_use_defaults=True)
        difference = first_difference(golden, comparable(final))
        if difference:
            problems.append(f"differs from the uninterrupted run at {difference}")
        failures += [f"{target}: {p}" for p in problems]
    assert not failures, "\n".join(failures[:20])
