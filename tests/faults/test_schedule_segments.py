"""Multi-fault schedules start from the first interrupt's crash state derived from the golden run (as a single
crash point does, faults/kit/derived.py): the later interrupts fire in the resumes as before, and every schedule
ends as it does when its first crash segment runs for real, one run fewer."""

from __future__ import annotations

from pathlib import Path

from strands_durable.faults.classes.explore import explore_schedule
from strands_durable.faults.kit.derived import SegmentPolicy, fallback_reason
from strands_durable.faults.kit.golden import cut_for
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from tests.faults.conftest import CHAIN


def test_a_schedules_first_crash_state_is_derived_and_it_ends_as_with_the_real_segment(tmp_path: Path) -> None:
    golden = run_golden(ChaosTarget(CHAIN), tmp_path / "golden")
    points = golden.points
    derivable = [i for i, p in enumerate(points) if fallback_reason(golden, p, cut_for(golden, p)) is None]
    schedules = [[points[i].id, points[j].id] for i, j in zip(derivable[::9], derivable[4::9], strict=False)]
    schedules += [
        [points[i].id, points[j].id, points[-1].id] for i, j in zip(derivable[2::23], derivable[7::23], strict=False)
    ]
    assert len(schedules) > 10
    for schedule in schedules:
        golden.segments = SegmentPolicy(derive=False)  # the real segment from the prefix to the first point
        real = explore_schedule(golden, schedule, tmp_path / "real")
        golden.segments = SegmentPolicy(seed=0)
        derived = explore_schedule(golden, schedule, tmp_path / "derived")
        assert derived.segment.startswith("derived"), (schedule, derived.segment)
        assert (derived.fired, derived.converged_at, derived.ok) == (real.fired, real.converged_at, real.ok)
        assert [str(p) for p in derived.problems] == [str(p) for p in real.problems]
        assert derived.runs == real.runs - 1, schedule
