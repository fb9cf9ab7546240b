"""Completion orders of a spec workflow's concurrent units (workflow tasks, parallel branches, orchestrator
workers), chosen instead of left to the lockstep scheduler's default.

A workflow golden run takes its concurrent units in lockstep (`runner/concurrency.py`): every job of a group
first reaches its `unit.before`, so a layer shows in the golden run as two or more `unit.before` points in a row
of different jobs (a job is the first segment of its unit: `branch:web`, `task:plan`, `round[0]:worker[1]`).
An order is a priority permutation of a layer's units given to the scheduler (`ChaosTarget.unit_order`): the
unit highest in it goes whenever it can, so the layer's jobs finish in that order. Each order is its own golden
run (cached like the golden run's, its key names the order); the points from the layer's first `unit.before` to
its last job's last point are crashed and resumed in it like any other. An order that its golden run did not
finish in (`reached`) is `not-fired`.

The policy (`golden`, `default`, `all`, with the bound) is the tools' one: `faults/kit/orders.py`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from strands_durable.faults.kit.golden import GoldenRun
from strands_durable.faults.kit.orders import order_label, orders_to_explore, possible_orders
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.runner.concurrency import job_identity


@dataclass(frozen=True)
class Layer:
    """The units a group of concurrent jobs started with, in the order they reached `unit.before`."""

    index: int  # counted from 0 over the run
    units: tuple[str, ...]
    first: int  # the golden point index of the first unit's `unit.before`

    @property
    def jobs(self) -> tuple[str, ...]:
        return tuple(job_identity(unit) for unit in self.units)


@dataclass(frozen=True)
class UnitOrder:
    """Finish the `layer`'s jobs in `order` (positions in `layer.units`, the first finished first)."""

    layer: Layer
    order: tuple[int, ...]

    @property
    def name(self) -> str:
        return f"layer[{self.layer.index}]/{self.label}"

    @property
    def label(self) -> str:
        return order_label(self.order)

    @property
    def priority(self) -> tuple[str, ...]:
        return tuple(self.layer.units[i] for i in self.order)

    def target(self, target: ChaosTarget) -> ChaosTarget:
        """`target` with this order given to the lockstep scheduler."""
        return dataclasses.replace(target, unit_order=self.priority)


def job_at(path: str, jobs: tuple[str, ...]) -> str | None:
    """The job of `jobs` a point's path lies under (a path goes on from its unit with `:agent` or `/`)."""
    return next((job for job in jobs if path == job or path.startswith((job + "/", job + ":"))), None)


def layers(golden: GoldenRun) -> list[Layer]:
    """The golden run's layers: runs of two or more `unit.before` points in a row, each of another job."""
    found: list[Layer] = []
    run: list[tuple[int, str]] = []

    def close() -> None:
        if len(run) >= 2:
            found.append(Layer(len(found), tuple(unit for _, unit in run), run[0][0]))
        run.clear()

    for gp in golden.points:
        unit = getattr(gp.point, "unit", "")
        if gp.point.site == "unit.before" and unit and all(job_identity(unit) != job_identity(u) for _, u in run):
            run.append((gp.index, unit))
            continue
        close()
    close()
    return found


def completion_order(golden: GoldenRun, layer: Layer) -> tuple[int, ...]:
    """Positions of `layer`'s jobs in the order `golden` finished them (the last point under each job)."""
    last = {job: -1 for job in layer.jobs}
    for gp in golden.points[layer.first :]:
        job = job_at(gp.point.path, layer.jobs)
        if job is not None:
            last[job] = gp.index
    return tuple(sorted(range(len(layer.jobs)), key=lambda i: last[layer.jobs[i]]))


def unit_orders(golden: GoldenRun, policy: str, *, seed: int = 0, bound: int = 3) -> list[UnitOrder]:
    """The orders to explore besides the golden run's own, for every layer of the golden run."""
    chosen = []
    for layer in layers(golden):
        own = completion_order(golden, layer)
        for order in orders_to_explore(len(layer.units), own, policy, seed=seed, batch=layer.index, bound=bound):
            chosen.append(UnitOrder(layer, order))
    return chosen


def orders_possible(golden: GoldenRun) -> int:
    return sum(possible_orders(len(layer.units)) for layer in layers(golden))


def find_layer(golden: GoldenRun, layer: Layer) -> Layer | None:
    """The layer of `golden` (an order's golden run) that starts with the same units, wherever it lies."""
    return next((found for found in layers(golden) if found.units == layer.units), None)


def reached(golden: GoldenRun, order: UnitOrder) -> bool:
    """Whether the order's golden run finished the layer's jobs in the order."""
    layer = find_layer(golden, order.layer)
    return layer is not None and completion_order(golden, layer) == order.order


def points_inside(golden: GoldenRun, order: UnitOrder) -> list[str]:
    """The ids of `golden`'s points from the layer's first `unit.before` to its last job's last point."""
    layer = find_layer(golden, order.layer)
    if layer is None:
        return []
    end = max(gp.index for gp in golden.points[layer.first :] if job_at(gp.point.path, layer.jobs) is not None)
    return [gp.id for gp in golden.points[layer.first : end + 1]]
