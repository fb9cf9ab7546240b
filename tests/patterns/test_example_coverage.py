"""Across examples/, the synthetic model's varied choices take every route and every graph edge, and the
evaluator and graph loops run at least twice. Each example runs with seeds 0, 2 and 3 (seed 0 alone already
loops the evaluator and the graph; the three seeds together take the three routes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable import LocalStore, RunOptions, run_workflow
from strands_durable.spec import load_spec
from tests.conftest import EXAMPLES

SEEDS = (0, 2, 3)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[tuple[object, object]]:
    """(spec, final state) of every example under every seed."""
    root = tmp_path_factory.mktemp("coverage")
    out = []
    for index, path in enumerate(sorted(EXAMPLES.glob("*.strands.yaml"))):
        for seed in SEEDS:
            store = LocalStore(root / "sessions")
            options = RunOptions(seed=seed, hitl_use_defaults=True, out_dir=root / f"out-{index}-{seed}")
            outcome = run_workflow(path, options, store=store)
            assert outcome.status == "completed", path.name
            out.append((load_spec(path), store.load(outcome.session_id)))
    return out


def of_type(runs, pattern: str):
    found = [(spec, state) for spec, state in runs if spec.pattern.type == pattern]
    assert found, f"examples/ has no {pattern} spec"
    return found


def test_every_route_is_taken(runs) -> None:
    for spec, _ in of_type(runs, "routing"):
        taken = {state.units["router"]["chosen_route"] for s, state in runs if s.name == spec.name}
        assert taken == set(spec.pattern.config.routes), spec.name


def test_every_graph_edge_is_taken_and_a_node_runs_at_least_twice(runs) -> None:
    for spec, _ in of_type(runs, "graph"):
        states = [state for s, state in runs if s.name == spec.name]
        taken = {
            (record["node"], following)
            for state in states
            for record in state.units.values()
            for following in record.get("next", [])
        }
        edges = {(edge.source, target) for edge in spec.pattern.config.edges for target in edge.targets}
        assert edges <= taken, f"{spec.name}: edges never taken: {sorted(edges - taken)}"
        assert max(max(s.pattern_state["iteration_counts"].values()) for s in states) >= 2, spec.name


def test_the_evaluator_loop_runs_at_least_twice(runs) -> None:
    for spec, _ in of_type(runs, "evaluator_optimizer"):
        iterations = [len(state.pattern_state["iterations"]) for s, state in runs if s.name == spec.name]
        assert max(iterations) >= 2, (spec.name, iterations)


def test_every_pattern_has_an_offline_example(runs) -> None:
    from strands_durable.spec.patterns import PATTERN_TYPES

    assert {spec.pattern.type for spec, _ in runs} == set(PATTERN_TYPES)
    assert all(spec.runtime.provider == "synthetic" for spec, _ in runs)
    assert all(Path(spec.source_path).name.endswith(".strands.yaml") for spec, _ in runs)
