"""Multi-fault schedules: two or three interrupts per run (each in the resume of the previous crash), explored
with hypothesis, which shrinks a failure to the minimal failing schedule. CI runs a fixed number of
derandomized examples.

A schedule may also name a completion order of concurrent units (`orders`: the golden runs of the orders the
policy explores, faults/kit/unit_orders.py): it is drawn first, and shrinks towards the golden run's own order,
then the points, drawn from that order's golden run.

The same schedules wherever the gate runs: hypothesis puts integer literals of the source files of the "local"
modules loaded (neither installed packages nor tests) into about 5% of its integer draws that they fit. Drawn as
plain indices, the schedules therefore depended on whether this package was installed editable (16 of the
examples' 70 differed from a wheel install) and on the project's own modules. Indices are drawn from a range that
starts at `_INDEX_BASE`, which no literal is near, and shifted back (`_index`): no literal fits, and a schedule still
shrinks towards the earliest points."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.faults.classes.explore import PointOutcome, explore_schedule
from strands_durable.faults.kit.golden import WorkflowGoldenRun

_INDEX_BASE = 3**30  # 205891132094649: no hypothesis constant (its own are powers, factorials, primorials) is near


def _index(st: Any, count: int) -> Any:
    """A strategy for an index below `count`, drawn where no source literal fits (see the module's docstring)."""
    return st.integers(_INDEX_BASE, _INDEX_BASE + count - 1).map(lambda drawn: drawn - _INDEX_BASE)


@dataclass
class ScheduleResult:
    examples: int = 0
    outcomes: list[PointOutcome] = field(default_factory=list)
    failure: PointOutcome | None = None  # the minimal failing schedule, when one was found
    failure_golden: WorkflowGoldenRun | None = None  # the golden run (and so the unit order) it ran in


def schedule_point_ids(golden: WorkflowGoldenRun) -> list[str]:
    """The golden run's points in run order (a schedule's faults must come one after another)."""
    return [p.id for p in golden.points]


def explore_schedules(
    golden: WorkflowGoldenRun,
    workdir: Path,
    *,
    examples: int,
    max_faults: int = 3,
    orders: list[WorkflowGoldenRun] | None = None,
) -> ScheduleResult:
    """Run `examples` derandomized schedules of 2..max_faults interrupts, each in the golden run's order or one of
    `orders`; shrink the first failure."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    goldens = [golden, *(orders or [])]
    ids = [schedule_point_ids(run) for run in goldens]
    result = ScheduleResult()
    if len(ids[0]) < 2 or examples <= 0:
        return result

    def points_of(choice: int) -> Any:
        points = st.lists(_index(st, len(ids[choice])), min_size=2, max_size=max_faults, unique=True).map(sorted)
        return points.map(lambda indices: (choice, indices))

    schedules = _index(st, len(goldens)).flatmap(points_of)

    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(schedules)
    def every_schedule_converges(drawn: tuple[int, list[int]]) -> None:
        choice, indices = drawn
        outcome = explore_schedule(goldens[choice], [ids[choice][i] for i in indices], workdir)
        result.examples += 1
        result.outcomes.append(outcome)
        if outcome.problems or not outcome.explored:
            result.failure = outcome  # the last failure hypothesis reports is the shrunk one
            result.failure_golden = goldens[choice]
            raise AssertionError(outcome.describe())

    with contextlib.suppress(AssertionError):  # `result.failure` holds the minimal failing schedule
        every_schedule_converges()
    return result
