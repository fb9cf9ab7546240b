"""Chaos plugin benchmark: crash points explored per second on the examples (synthetic model), and the cost of
one crash point against workflow length (a 10-step vs a 50-step chain, default convergence mode).

    .venv/bin/python bench/bench_chaos.py [--points-per-chain 60]

Prints one line per measurement and the ratios, all measured in this one run. Scratch space as in the plugin
(STRANDS_CHAOS_TMPDIR, else /dev/shm, else the temp directory).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from strands_durable.faults.explore import ChaosTarget, explore_point, iter_points, run_golden
from strands_durable.faults.suite import default_workdir

REPO = Path(__file__).resolve().parents[1]


def chain_spec(steps: int, *, shared_agent: bool) -> str:
    agents = ["a0"] if shared_agent else [f"a{i}" for i in range(steps)]
    lines = [
        "version: 0",
        f"name: bench-chain-{steps}",
        "runtime: {provider: synthetic}",
        "tools: {python: [calculator]}",
        "agents:",
        *[
            f"  {a}: {{prompt: 'You estimate and check numbers with the calculator.', tools: [calculator]}}"
            for a in agents
        ],
        "pattern:",
        "  type: chain",
        "  config:",
        "    steps:",
    ]
    for i in range(steps):
        agent = agents[0] if shared_agent else agents[i]
        lines.append(f"      - {{agent: {agent}, input: 'Step {i}: refine {{{{ last_response | truncate(80) }}}}'}}")
    return "\n".join(lines) + "\n"


def explore(spec: Path, workdir: Path, max_points: int | None) -> tuple[int, int, float]:
    """(points in the golden run, points explored, seconds spent exploring them); failures are printed."""
    golden = run_golden(ChaosTarget(spec), workdir / "golden")
    ids = list(iter_points(golden, max_points, 0))
    start = time.perf_counter()
    for point_id in ids:
        outcome = explore_point(golden, point_id, workdir / "points")
        if not outcome.ok:
            print("  FAILED " + outcome.describe().replace("\n", "\n  "))
    return len(golden.points), len(ids), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points-per-chain", type=int, default=60)
    args = parser.parse_args()
    workdir = default_workdir()
    print(f"scratch: {workdir}")

    total_points, total_time = 0, 0.0
    for spec in sorted((REPO / "examples").glob("*.strands.yaml")):
        found, explored, seconds = explore(spec, workdir / spec.stem, None)
        total_points += explored
        total_time += seconds
        print(f"{spec.name:45s} {explored:4d} points  {explored / seconds:6.1f} points/s")
    print(f"examples: {total_points} crash points in {total_time:.1f} s = {total_points / total_time:.1f} points/s")

    specs = Path(tempfile.mkdtemp(dir=workdir))
    for shared in (False, True):
        per_point = {}
        for steps in (10, 50):
            spec = specs / f"chain-{steps}-{'shared' if shared else 'distinct'}.strands.yaml"
            spec.write_text(chain_spec(steps, shared_agent=shared))
            found, explored, seconds = explore(spec, workdir / spec.stem, args.points_per_chain)
            per_point[steps] = seconds / explored
            print(
                f"chain of {steps:2d} steps ({'one agent' if shared else 'one agent per step'}): {found} points, "
                f"{explored} explored, {per_point[steps] * 1000:.1f} ms per point"
            )
        ratio = per_point[50] / per_point[10]
        label = "one agent" if shared else "one agent per step"
        print(f"cost per crash point, 50 vs 10 steps ({label}): ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
