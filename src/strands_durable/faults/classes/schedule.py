"""Multi-fault schedules: two or three interrupts per run (each in the resume of the previous crash), explored
with hypothesis, which shrinks a failure to the minimal failing schedule. CI runs a fixed number of
derandomized examples."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

from strands_durable.faults.classes.explore import PointOutcome, explore_schedule
from strands_durable.faults.kit.golden import WorkflowGoldenRun


@dataclass
class ScheduleResult:
    examples: int = 0
    outcomes: list[PointOutcome] = field(default_factory=list)
    failure: PointOutcome | None = None  # the minimal failing schedule, when one was found


def schedule_point_ids(golden: WorkflowGoldenRun) -> list[str]:
    """The golden run's points in run order (a schedule's faults must come one after another)."""
    return [p.id for p in golden.points]


def explore_schedules(
    golden: WorkflowGoldenRun, workdir: Path, *, examples: int, max_faults: int = 3
) -> ScheduleResult:
    """Run `examples` derandomized schedules of 2..max_faults interrupts; shrink the first failure."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    ids = schedule_point_ids(golden)
    result = ScheduleResult()
    if len(ids) < 2 or examples <= 0:
        return result
    schedules = st.lists(st.integers(0, len(ids) - 1), min_size=2, max_size=max_faults, unique=True).map(sorted)

    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(schedules)
    def every_schedule_converges(indices: list[int]) -> None:
        outcome = explore_schedule(golden, [ids[i] for i in indices], workdir)
        result.examples += 1
        result.outcomes.append(outcome)
        if outcome.problems or not outcome.explored:
            result.failure = outcome  # the last failure hypothesis reports is the shrunk one
            raise AssertionError(outcome.describe())

    with contextlib.suppress(AssertionError):  # `result.failure` holds the minimal failing schedule
        every_schedule_converges()
    return result
