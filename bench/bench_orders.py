"""What exploring completion orders costs: the chaos gate's wall time per order policy (`--strands-chaos-orders`
golden, default, all), on the spec examples and on a Python agent whose turn runs two tools concurrently (the
ledger agent of faults/agents/examples.py, both prompts), all measured in this one run.

    .venv/bin/python bench/bench_orders.py [--rounds 2] [--examples DIR] [--skip-examples] [--skip-agent]

Each measurement is one fresh `pytest --strands-chaos -n 0` process; the policies alternate within each round (the
machine may be shared: compare the ratios to `golden`, measured next to each other, not the seconds). Prints, per
workload and policy, the crash points explored, the completion orders explored of those possible (the coverage
line), the median wall seconds and CPU seconds (of the pytest process, `RUSAGE_CHILDREN`: steadier than the wall
on a loaded machine) and their ratios to `golden`; the issue's bound is 2x for `default`.
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
POLICIES = ("golden", "default", "all")
SUMMARY = re.compile(r"strands-chaos: (\d+) crash points explored")
ORDERS = re.compile(r"strands-chaos: coverage orders: (\d+) of (\d+) completion orders explored")
LEDGER = """
import pytest

from strands_durable.faults.agents.examples import LEDGER_PROMPTS, ledger_agent

pytestmark = pytest.mark.strands_chaos(prompts=list(LEDGER_PROMPTS))


def build_agent_ledger(ctx):
    return ledger_agent(ctx)
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str], cwd: Path) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds, crash points explored, the orders coverage text) of one pytest process."""
    start, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=cwd, capture_output=True, text=True, check=False)
    seconds, cpu = time.perf_counter() - start, _children_cpu() - cpu
    points = SUMMARY.search(done.stdout)
    if points is None or done.returncode not in (0, 1):
        raise SystemExit(f"pytest {' '.join(args)} failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    orders = ORDERS.search(done.stdout)
    return seconds, cpu, int(points.group(1)), f"{orders.group(1)} of {orders.group(2)}" if orders else "none"


def measure(name: str, target: str, cwd: Path, rounds: int) -> None:
    seconds: dict[str, list[float]] = {policy: [] for policy in POLICIES}
    cpus: dict[str, list[float]] = {policy: [] for policy in POLICIES}
    shown: dict[str, tuple[int, str]] = {}
    base = ["--strands-chaos", "--strands-chaos-schedules=0", "-n", "0", "-q", "-p", "no:randomly"]
    base += ["-p", "no:cacheprovider"]
    for _ in range(rounds):
        for policy in POLICIES:
            wall, cpu, points, orders = timed([*base, f"--strands-chaos-orders={policy}", target], cwd)
            seconds[policy].append(wall)
            cpus[policy].append(cpu)
            shown[policy] = (points, orders)
    golden, golden_cpu = statistics.median(seconds["golden"]), statistics.median(cpus["golden"])
    for policy in POLICIES:
        middle, cpu = statistics.median(seconds[policy]), statistics.median(cpus[policy])
        points, orders = shown[policy]
        print(
            f"{name:10s} {policy:8s} {points:5d} points, orders {orders:10s} {middle:7.1f} s "
            f"({middle / golden:.2f}x golden), CPU {cpu:6.1f} s ({cpu / golden_cpu:.2f}x golden)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--examples", type=Path, default=REPO / "examples")
    parser.add_argument("--skip-examples", action="store_true")
    parser.add_argument("--skip-agent", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-orders-") as scratch:
        agent_dir = Path(scratch)
        (agent_dir / "test_ledger_agent.py").write_text(LEDGER)
        if not options.skip_agent:
            measure("ledger", "test_ledger_agent.py", agent_dir, options.rounds)
        if not options.skip_examples:
            measure("examples", str(options.examples.resolve()), REPO, options.rounds)


if __name__ == "__main__":
    main()
