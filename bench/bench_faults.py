"""Fault harness benchmark: kill-mode crash points per second (SIGKILL of a real forked child at each point, a
resume, the judgement) against in-process crash points per second on the same points.

    .venv/bin/python bench/bench_faults.py [--spec examples/chain-research.strands.yaml] [--points 30] [--rounds 3]

Kill mode is `faults.classes.kill.kill_at_point`: the child starts from the golden journal prefix before the point and
dies there by SIGKILL; the resume (in the parent) stops at convergence and is judged from disk. Two in-process
baselines: `from the start` raises InjectedCrash at the point in a run from the start, resumes in fresh objects
to the end and judges the whole run (kill mode's scheme before it started at the prefix); `plugin explorer` is
`faults.classes.explore.explore_point` (the pytest plugin's: journal-prefix start, convergence stop, and a second crash
when the resume passes the point again). All three share one golden run (`faults.kit.runs.run_golden`). Rounds
alternate the modes so machine load hits them alike; the median round counts. Prints one line per measurement
and the ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from pathlib import Path

from strands_durable.crashpoints import CrashPoint, CrashPoints, InjectedCrash
from strands_durable.faults.classes.explore import explore_point
from strands_durable.faults.classes.kill import kill_at_point
from strands_durable.faults.kit.findings import FaultRun
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.observe import run_options
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.scratch import reset_dir
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.runner.run import resume, run_workflow
from strands_durable.store.local import LocalStore

REPO = Path(__file__).resolve().parents[1]
KILL = "kill (SIGKILL, forked child)"
SCRATCH = "in-process (from the start)"
PLUGIN = "in-process (plugin explorer)"


def in_process(golden: WorkflowGoldenRun, points: list[str], workspace: Path) -> float:
    """Points per second of a crash in a run from the start, a resume to the end, the final judgement."""
    target = golden.target
    started = time.perf_counter()
    for point_id in points:
        reset_dir(workspace)
        sessions, out_dir = workspace / "sessions", workspace / "out"
        bus = CrashPoints()
        fired: list[CrashPoint] = []

        def crash(point: CrashPoint, point_id: str = point_id, fired: list[CrashPoint] = fired) -> None:
            if not fired and point.id == point_id:
                fired.append(point)
                raise InjectedCrash(point)

        bus.subscribe(crash)
        with contextlib.suppress(InjectedCrash):
            run_workflow(
                target.spec_path,
                run_options(target, out_dir, bus),
                store=LocalStore(sessions),
                session_id=target.session_id,
            )
        if LocalStore(sessions).load(target.session_id).status != "completed":
            resume(target.session_id, run_options(target, out_dir, CrashPoints()), store=LocalStore(sessions))
        check = FaultRun("interrupt", target.name)
        check.judge(golden, sessions, point_id, "")
        assert not check.findings, check.findings[:3]
    return len(points) / (time.perf_counter() - started)


def killed(golden: WorkflowGoldenRun, points: list[str], workspace: Path) -> float:
    run = FaultRun("kill", golden.target.name)
    started = time.perf_counter()
    for point_id in points:
        kill_at_point(golden, point_id, "SIGKILL", workspace, run)
    rate = len(points) / (time.perf_counter() - started)
    assert not run.findings and run.outcomes["resumed"] == len(points), run.findings[:3]
    return rate


def plugin_explorer(golden: WorkflowGoldenRun, points: int, workdir: Path):  # -> callable
    ids = golden.ordered_ids()
    chosen = [ids[int(i * len(ids) / points)] for i in range(points)]

    def measure() -> float:
        started = time.perf_counter()
        for number, point_id in enumerate(chosen):
            outcome = explore_point(golden, point_id, workdir / f"plugin-{number}")
            assert outcome.ok, outcome.describe()
        return len(chosen) / (time.perf_counter() - started)

    return measure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=REPO / "examples" / "chain-research.strands.yaml")
    parser.add_argument("--points", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench-faults-"))
    golden = run_golden(ChaosTarget(args.spec), workdir / "golden").require_completed()  # one golden run for all
    ids = list(dict.fromkeys(golden.point_ids))
    points = [ids[int(i * len(ids) / args.points)] for i in range(min(args.points, len(ids)))]
    plugin = plugin_explorer(golden, len(points), workdir)
    rates: dict[str, list[float]] = {SCRATCH: [], KILL: [], PLUGIN: []}
    for _ in range(args.rounds):
        rates[SCRATCH].append(in_process(golden, points, workdir / "inproc"))
        rates[KILL].append(killed(golden, points, workdir / "kill"))
        rates[PLUGIN].append(plugin())
    print(f"{args.spec.name}: {len(points)} of {len(ids)} crash points, {args.rounds} alternating rounds (median)")
    medians = {name: statistics.median(values) for name, values in rates.items()}
    for name, rate in medians.items():
        print(f"  {name:<32} {rate:7.2f} crash points/s")
    kill_rate = medians[KILL]
    for name, rate in medians.items():
        if name.startswith("in-process"):
            print(f"  ratio {name} / kill: {rate / kill_rate:.2f}x (target: within 3x)")


if __name__ == "__main__":
    main()
