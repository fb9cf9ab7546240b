"""The kit's unit orders (faults/kit/unit_orders.py) over real golden runs: a layer of concurrent units is found
where its jobs start together, a priority given to the lockstep scheduler finishes them in that order (every one
of the 3! orders of three parallel branches), each order's golden run has a key of its own, and a run without the
priority does not count as having reached another order."""

from __future__ import annotations

import itertools
from pathlib import Path

from strands_durable.faults.golden_file import golden_key
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import spec_target
from strands_durable.faults.kit.unit_orders import (
    UnitOrder,
    completion_order,
    layers,
    points_inside,
    reached,
    unit_orders,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PARALLEL = EXAMPLES / "parallel-market-scan.strands.yaml"
RELEASE_PLAN = EXAMPLES / "workflow-release-plan.strands.yaml"
BRANCHES = ("branch:competitors/step[0]", "branch:pricing/step[0]", "branch:trends/step[0]")


def test_every_priority_of_three_branches_finishes_them_in_its_order(tmp_path: Path) -> None:
    target = spec_target(PARALLEL)
    golden = run_golden(target, tmp_path / "golden")
    (layer,) = layers(golden)
    assert layer.units == BRANCHES and layer.first == 0
    own = completion_order(golden, layer)
    for number, order in enumerate(itertools.permutations(range(3))):
        chosen = UnitOrder(layer, order)
        ordered = run_golden(chosen.target(target), tmp_path / f"order{number}")
        assert not ordered.problems
        assert reached(ordered, chosen), order
        assert completion_order(ordered, layer) == order
        assert ordered.comparable == golden.comparable  # the branches are independent: the outcome is the same
        assert reached(golden, chosen) == (order == own)  # the default scheduler reached only its own order
    assert len(unit_orders(golden, "all")) == 5 and len(unit_orders(golden, "default")) == 1
    assert unit_orders(golden, "golden") == []


def test_the_points_of_an_order_lie_inside_its_layer_and_each_order_has_its_own_golden_key(tmp_path: Path) -> None:
    target = spec_target(RELEASE_PLAN)
    golden = run_golden(target, tmp_path / "golden")
    (chosen,) = unit_orders(golden, "default")
    assert chosen.name == "layer[0]/order[1,0]" and chosen.priority == ("task:risks", "task:research")
    ordered = run_golden(chosen.target(target), tmp_path / "ordered")
    inside = points_inside(ordered, chosen)
    assert inside[0] == "task:research:analyst/unit.before" and inside[-1] == "task:research:analyst/unit.after"
    assert all(i.startswith(("task:research:", "task:risks:")) for i in inside)
    keys = {golden_key(target), golden_key(chosen.target(target)), golden_key(chosen.target(target))}
    assert len(keys) == 2 and None not in keys
