"""In-process interrupts: an `InjectedCrash` at each crash point of the golden run, resumed in fresh objects and
judged (faults/classes/explore.py explores one point). The registry's view of the class the pytest plugin runs point by
point: `strands chaos --faults interrupt` and the soak run it over a spec at the level's bounds."""

from __future__ import annotations

from pathlib import Path

from strands_durable.faults.classes.explore import explore_point, iter_points
from strands_durable.faults.kit.findings import FaultClass, FaultRun
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget

FAULT = "interrupt"


def explore_interrupt(
    target: ChaosTarget,
    workdir: Path,
    *,
    golden: WorkflowGoldenRun | None = None,
    max_points: int | None = None,
    seed: int = 0,
    run: FaultRun | None = None,
) -> FaultRun:
    """Interrupt the run at every crash point of the golden run (at most `max_points`, spread over every site
    kind), resume each and judge it."""
    run = run or FaultRun(FAULT, target.name)
    golden = golden or run_golden(target, workdir / "golden")
    for problem in golden.problems:
        run.add("golden", "", problem.rule, problem.detail)
    for point_id in iter_points(golden, max_points, seed):
        outcome = explore_point(golden, point_id, workdir / "points")
        run.explore_at(point_id)
        if not outcome.explored:
            run.add(point_id, "", "not-fired", "the fault was never injected: the resumed run did not reach it")
        run.outcomes["converged" if outcome.converged_at else "resumed"] += 1
        for problem in outcome.problems:
            run.add(point_id, "", problem.rule, problem.detail)
    return run


FAULT_CLASS = FaultClass(FAULT, {"gate": {"max_points": 30}, "full": {}}, explore_interrupt, seeded=True)
