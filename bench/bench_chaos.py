"""Chaos plugin benchmark: crash points explored per second on the examples (synthetic model), and the cost of
one crash point against workflow length (a 10-step vs a 50-step chain, default convergence mode; each chain's
once-per-workflow exactness sample runs before its timing and is printed on its own; the same points of both
chains are then explored `--rounds` times, alternating, and the medians compared).

    .venv/bin/python bench/bench_chaos.py [--points-per-chain 60] [--rounds 5] [--chains-only] [--chain-steps 10,50]
    .venv/bin/python bench/bench_chaos.py --baseline OLD/src [--rounds 5] [--xdist] [--examples DIR]

Prints one line per measurement and the ratios, all measured in this one run. Scratch space as in the plugin
(STRANDS_CHAOS_TMPDIR, else /dev/shm, else the temp directory): one directory per run, removed when it ends; the
processes it starts make theirs inside it.

With `--baseline` (the `src` directory of another tree, e.g. `git archive main src | tar -x -C /tmp/base`) the
examples' points/s is measured for both trees in fresh processes, alternating baseline and this tree `--rounds`
times (the machine is shared, so rounds are paired and medians compared). `--xdist` also times the whole
`pytest --strands-chaos examples/` process serially (`-n 0`) and on two workers (`-n 2`), alternating, for each
tree measured, and prints serial / `-n 2`, where each process's CPU went (bench/xdist_probe.py; the parts are those
of `--whole`, below), and the ceiling the CPU of `-n 2` sets: serial wall / (its CPU / cores), which no run using
that much CPU on these cores can beat. `--examples DIR` measures another directory of specs than examples/ (issue 18
pins the workload: the 7 examples as at 5526c56, `git archive 5526c56 examples | tar -x -C DIR/..`).
`--freeze-gc` also measures this tree with the plugin's one tuning on (`--strands-chaos-freeze-gc`,
faults/kit/collector.py) as one more tree of the comparison. Each summary line ends with the issue's target for it.

`--own-work` (issue 37) prints, `--rounds` times in one process, the explorer's own CPU per crash point of the
examples: its thread's CPU in `explore_point` less that in the resumes it starts; then that thread's CPU per point
split into the seeds, the checks' reads, judging and the rest, the resumes' store opens and runs, and the collector.

`--segments` (issue 37) measures, in one process over the same golden runs and alternating `--rounds` times, the
examples' points/s with every crash state reached by its real segment against the default (derived from the golden
run where it can be, a seeded 1 in 10 also checked against the real segment), and the runs each point costs.

`--resumes` (issue 37) measures one resume in one process, cold (as `strands run --resume`) and warm (what every
resume of the workflow reads and none changes built once, runner/prepared.py), in pairs over every crash point of
the examples, `--rounds` times: each pair resumes the same seeded state to convergence (milliseconds per resume), then
explores the whole point (points/s).

`--workers N` (issue 37) measures the forked workers against the baselines, alternating, `--rounds` times: the
exploration phase of the examples (golden runs done first, not counted) in this process and in N workers forked
from it (faults/kit/workers.py; the forks are counted), and the whole `pytest --strands-chaos examples/ -n 0`
process of every tree against this tree's with `--strands-chaos-workers=N`; this tree's whole runs (serial and
forked) with `--strands-chaos-orders=golden` (the issue's target figures) and with the default orders, a baseline's as
it is (fc915bd has no orders option).

`--whole` (issue 37) times only the whole serial `pytest --strands-chaos examples/ -n 0` process of every tree,
alternating `--rounds` times (this tree with `--strands-chaos-orders=golden`), wall and CPU seconds, and where each
process's CPU went: until its first item (interpreter, imports, collection with the golden runs), in the runs of
the crash-point items (with each workflow's exactness sample), around the items (pytest's per-item work and the
plugins' hooks), in the `schedules` items, and after its unconfigure (pytest's end-of-run collections, the
interpreter's exit); and how much of the phases before unconfigure the cyclic collector took.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from strands_durable.faults.suite import default_workdir

try:  # the kit in its wings (faults/kit, faults/classes)
    from strands_durable.faults.classes.explore import explore_point, iter_points
    from strands_durable.faults.kit.runs import run_golden
    from strands_durable.faults.kit.target import ChaosTarget
except ImportError:  # a baseline tree from before the wings: one flat faults/ folder
    from strands_durable.faults.explore import explore_point, iter_points  # type: ignore[no-redef]
    from strands_durable.faults.golden import run_golden  # type: ignore[no-redef]
    from strands_durable.faults.target import ChaosTarget  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"  # xdist_probe.py, the plugin each timed pytest run loads


def chain_spec(steps: int, *, shared_agent: bool) -> str:
    """The chain comparison's spec (this tree's: a baseline tree runs only the examples' rate, `--examples-rate-only`,
    through this file, so the import waits until a chain is asked for)."""
    from strands_durable.testing.chain import refining_chain_text

    return refining_chain_text(steps, one_agent=shared_agent, name=f"bench-chain-{steps}")


def explore(spec: Path, workdir: Path, max_points: int | None) -> tuple[int, int, float, float]:
    """(points in the golden run, points explored, seconds spent exploring them, CPU seconds of this process's
    threads in that time); failures are printed."""
    golden = run_golden(ChaosTarget(spec), workdir / "golden")
    ids = list(iter_points(golden, max_points, 0))
    start, cpu = time.perf_counter(), time.process_time()
    for point_id in ids:
        outcome = explore_point(golden, point_id, workdir / "points")
        if not outcome.ok:
            print("  FAILED " + outcome.describe().replace("\n", "\n  "))
    return len(golden.points), len(ids), time.perf_counter() - start, time.process_time() - cpu


TARGET_RATE = 200  # crash points per second in one process (issue 18 item 4)
TARGET_XDIST = 1.6  # serial / -n 2 on 2 cores


def own_work(workdir: Path, examples: Path) -> None:
    """The explorer's own CPU per crash point over every point of the examples (golden runs and exactness samples
    first, not counted): this thread's CPU in `explore_point` less its CPU in the resumes it starts (seeding, reading
    back, judging, and the collections that fall in them), and all of this process's CPU per point. Then where this
    thread's CPU went, per point: the seeds (the run directory pruned, the journal prefix and workspace written), the
    checks' reads of the session, the rest of the explorer (judging, derivation, observers), the resumes' store
    opens and the rest of the resumes (the runs), and the cyclic collector's passes wherever they fell."""
    import gc

    import strands_durable.runner.run as runner_run
    from strands_durable.faults.classes import explore as explorer
    from strands_durable.store.local import LocalStore

    goldens = []
    for spec in sorted(examples.glob("*.strands.yaml")):
        golden = run_golden(ChaosTarget(spec), workdir / spec.stem / "golden")
        explorer._sample_verdicts(golden, workdir / spec.stem / "points" / "real-segment")
        goldens.append((golden, workdir / spec.stem / "points"))
    spent: dict[str, float] = dict.fromkeys(("resumes", "seeds", "reads", "opens", "collector"), 0.0)
    timed = [("resumes", runner_run, "resume"), ("seeds", explorer._Exploration, "_seed")]
    timed += [("reads", explorer._Exploration, "load"), ("opens", LocalStore, "open")]
    originals = [(owner, name, getattr(owner, name)) for _, owner, name in timed]
    for (part, owner, name), (_, _, original) in zip(timed, originals, strict=True):
        setattr(owner, name, _thread_timed(original, spent, part))  # timed, not replaced: the explorer's own calls
    started = [0.0]

    def collecting(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.thread_time()
        else:
            spent["collector"] += time.thread_time() - started[0]

    gc.callbacks.append(collecting)
    try:
        points, start, cpu = 0, time.thread_time(), time.process_time()
        for golden, points_dir in goldens:
            for point_id in iter_points(golden, None, 0):
                explore_point(golden, point_id, points_dir)
                points += 1
        explorer_cpu, process = time.thread_time() - start, time.process_time() - cpu
    finally:
        gc.callbacks.remove(collecting)
        for owner, name, original in originals:
            setattr(owner, name, original)
    own, runs, everything = ((explorer_cpu - spent["resumes"]) / points, spent["resumes"] / points, process / points)
    print(
        f"examples: {points} crash points; the explorer's own CPU {own * 1000:.2f} ms per point (its resumes "
        f"{runs * 1000:.2f} ms in this thread); all CPU {everything * 1000:.2f} ms per point (target: half of ~1.4 ms)"
    )
    rest = explorer_cpu - spent["resumes"] - spent["seeds"] - spent["reads"]
    split = {
        "seeds": spent["seeds"],
        "reads": spent["reads"],
        "judging and the rest": rest,
        "resumes' opens": spent["opens"],  # a check's read opens nothing
        "resumes' runs": spent["resumes"] - spent["opens"],
        "collector (in all of them)": spent["collector"],
    }
    print("  per point, this thread (ms): " + ", ".join(f"{k} {v / points * 1000:.2f}" for k, v in split.items()))


def _thread_timed(function: Any, spent: dict[str, float], part: str) -> Any:
    """`function`, adding this thread's CPU in it to `spent[part]` (calls from other threads are not counted)."""
    import threading

    main = threading.get_ident()

    def timed(*args: Any, **options: Any) -> Any:
        if threading.get_ident() != main:
            return function(*args, **options)
        start = time.thread_time()
        try:
            return function(*args, **options)
        finally:
            spent[part] += time.thread_time() - start

    return timed


def examples_rate(workdir: Path, examples: Path, *, quiet: bool = False) -> tuple[float, float]:
    """Crash points per second over every point of the examples (golden runs not counted): per wall-clock
    second and per CPU second of this process (steadier on a machine others use)."""
    total_points, total_time, total_cpu = 0, 0.0, 0.0
    for spec in sorted(examples.glob("*.strands.yaml")):
        _, explored, seconds, cpu = explore(spec, workdir / spec.stem, None)
        total_points += explored
        total_time += seconds
        total_cpu += cpu
        if not quiet:
            print(f"{spec.name:45s} {explored:4d} points  {explored / seconds:6.1f} points/s")
    if not quiet:
        print(
            f"examples: {total_points} crash points in {total_time:.1f} s = {total_points / total_time:.1f} points/s "
            f"({total_points / total_cpu:.1f} per CPU second)"
        )
    return total_points / total_time, total_points / total_cpu


def forked_rates(workdir: Path, examples: Path, workers: int) -> dict[str, float]:
    """The exploration phase of every point of the examples, in this process and then in `workers` forked workers,
    over the same golden runs: points per wall-clock second of each (every point must pass)."""
    from strands_durable.faults.kit.workers import ForkedWorkers

    goldens = [run_golden(ChaosTarget(spec), workdir / spec.stem) for spec in sorted(examples.glob("*.strands.yaml"))]
    tasks = [(golden, point_id) for golden in goldens for point_id in iter_points(golden, None, 0)]

    def run(number: int) -> bool:
        golden, point_id = tasks[number]
        return explore_point(golden, point_id, golden.workdir / f"points-{os.getpid()}").ok

    start, cpu = time.perf_counter(), time.process_time()
    serial = [run(n) for n in range(len(tasks))]
    serial_s, serial_cpu = time.perf_counter() - start, time.process_time() - cpu
    start, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    with ForkedWorkers(run, count=workers) as pool:
        pool.start(range(len(tasks)))
        forked = [pool.result(n) for n in range(len(tasks))]
    forked_s = time.perf_counter() - start
    forked_cpu = time.process_time() - cpu + _children_cpu() - children  # the workers are reaped by now
    if not all(serial) or not all(forked):
        raise SystemExit("Error: a crash point failed while benchmarking")
    return {
        "points": len(tasks),
        "serial": len(tasks) / serial_s,
        "forked": len(tasks) / forked_s,
        "serial_cpu": len(tasks) / serial_cpu,  # points per CPU second, all processes of the phase
        "forked_cpu": len(tasks) / forked_cpu,
    }


def compare_segments(workdir: Path, examples: Path, rounds: int) -> None:
    """Issue 37 item 1 in one process, alternating `rounds` times over the same golden runs: every point of the
    examples reached by its real crash segment, and by the default policy (the crash state derived from the golden
    run where `fallback_reason` allows, the real segment also run at a seeded 1 in 10 to compare). Prints each
    one's median points/s (wall and CPU), the ratio, the runs per point and the crash states by how they were
    reached."""
    from collections import Counter

    from strands_durable.faults.kit.derived import SegmentPolicy

    goldens = [run_golden(ChaosTarget(spec), workdir / spec.stem) for spec in sorted(examples.glob("*.strands.yaml"))]
    tasks = [(golden, point_id) for golden in goldens for point_id in iter_points(golden, None, 0)]
    policies = {"real segments": SegmentPolicy(derive=False), "derived (1 in 10 checked)": SegmentPolicy()}
    rates: dict[str, list[float]] = {}
    cpu_rates: dict[str, list[float]] = {}
    runs: dict[str, int] = {}
    segments: dict[str, Counter[str]] = {}
    loads = [os.getloadavg()[0]]
    for _ in range(rounds):
        for label, policy in policies.items():
            count, reached = 0, Counter()
            start, cpu = time.perf_counter(), time.process_time()
            for golden, point_id in tasks:
                golden.segments = policy
                outcome = explore_point(golden, point_id, golden.workdir / "points")
                if not outcome.ok:
                    raise SystemExit("Error: a crash point failed while benchmarking:\n" + outcome.describe())
                count += outcome.runs
                reached[outcome.segment] += 1
            rates.setdefault(label, []).append(len(tasks) / (time.perf_counter() - start))
            cpu_rates.setdefault(label, []).append(len(tasks) / (time.process_time() - cpu))
            runs[label], segments[label] = count, reached
        loads.append(os.getloadavg()[0])
    print(f"load average (1 min) at the start and after each round: {', '.join(f'{x:.1f}' for x in loads)}")
    for label in policies:
        wall = _median_line(f"exploration, {label}", rates[label], "points/s")
        _median_line(f"exploration, {label}", cpu_rates[label], "points/CPU s")
        print(f"  {runs[label] / len(tasks):.2f} runs per point; crash states: {dict(sorted(segments[label].items()))}")
        rates[label] = [wall]
    real, derived = (statistics.median(v) for v in (rates["real segments"], rates["derived (1 in 10 checked)"]))
    real_cpu, derived_cpu = (statistics.median(cpu_rates[k]) for k in policies)
    print(
        f"derived / real segments: {derived / real:.2f}x points/s ({derived_cpu / real_cpu:.2f}x per CPU second), "
        f"{len(tasks)} points"
    )


def compare_resumes(workdir: Path, examples: Path, rounds: int) -> None:
    """Issue 37 item 2 in one process: the cost of one resume, cold (it reads and derives everything itself, as
    `strands run --resume` does) and warm (with the golden run's `prepared_resume()`, runner/prepared.py). For
    every crash point of the examples, the session is seeded with the golden run's durable state before the point
    and resumed to convergence, cold and warm in turn (the first of the pair alternates), `rounds` times; only the
    resume itself is timed (the store's open and abandon, the run, the explorer's checks of it); then each point is
    explored whole (`explore_point`), cold and warm in the same pairs, for points/s."""
    from strands_durable.faults.classes.explore import PointOutcome, _Exploration
    from strands_durable.faults.kit.golden import cut_for

    goldens = [run_golden(ChaosTarget(spec), workdir / spec.stem) for spec in sorted(examples.glob("*.strands.yaml"))]
    tasks = [(golden, point_id) for golden in goldens for point_id in iter_points(golden, None, 0)]
    wall: dict[bool, list[float]] = {False: [], True: []}
    cpu: dict[bool, list[float]] = {False: [], True: []}
    point_wall, point_cpu = {False: 0.0, True: 0.0}, {False: 0.0, True: 0.0}  # whole points (`explore_point`)
    loads = [os.getloadavg()[0]]
    for number in range(rounds + 1):  # round 0 untimed: imports, caches and the prepared workflows are built
        for index, (golden, point_id) in enumerate(tasks):
            for warm in (False, True) if (index + number) % 2 else (True, False):
                golden.warm_resumes = warm
                ex = _Exploration(golden, golden.workdir / "resume-cost", PointOutcome(point_ids=[point_id]))
                ex.seed_prefix(cut_for(golden, golden.point(point_id)))
                before = ex.seeded()
                start, used = time.perf_counter(), time.process_time()
                ex.resume(arm=None, converge=True, label="resume", before=before)
                if number:
                    wall[warm].append(time.perf_counter() - start)
                    cpu[warm].append(time.process_time() - used)
                if ex.outcome.problems:
                    raise SystemExit("Error: a resume failed while benchmarking:\n" + ex.outcome.describe())
                start, used = time.perf_counter(), time.process_time()
                outcome = explore_point(golden, point_id, golden.workdir / "points")
                if number:
                    point_wall[warm] += time.perf_counter() - start
                    point_cpu[warm] += time.process_time() - used
                if not outcome.ok:
                    raise SystemExit("Error: a crash point failed while benchmarking:\n" + outcome.describe())
        if number:
            loads.append(os.getloadavg()[0])
    for golden in goldens:
        golden.warm_resumes = True
    print(f"load average (1 min) at the start and after each round: {', '.join(f'{x:.1f}' for x in loads)}")
    count = len(wall[True])
    for warm in (False, True):
        label = "warm (prepared once per workflow)" if warm else "cold (strands run --resume)"
        print(
            f"one resume, {label}: {1000 * sum(wall[warm]) / count:.2f} ms wall, {1000 * sum(cpu[warm]) / count:.2f} "
            f"ms CPU (median {1000 * statistics.median(cpu[warm]):.2f} ms CPU), {count} resumes"
        )
    print(
        f"warm / cold: {sum(wall[True]) / sum(wall[False]):.2f}x wall, {sum(cpu[True]) / sum(cpu[False]):.2f}x CPU "
        f"(medians {statistics.median(cpu[True]) / statistics.median(cpu[False]):.2f}x); "
        f"saved per resume: {1000 * (sum(cpu[False]) - sum(cpu[True])) / count:.2f} ms CPU"
    )
    rate = {warm: count / point_wall[warm] for warm in (False, True)}
    print(
        f"whole crash points, warm / cold: {rate[True]:.1f} / {rate[False]:.1f} points/s = "
        f"{rate[True] / rate[False]:.2f}x wall, {point_cpu[False] / point_cpu[True]:.2f}x per CPU second"
    )


TARGET_FORKED = 1.8  # forked workers (2) / one process, exploration phase (issue 37)
TARGET_WALL = (0.75, 0.6)  # whole pytest wall / fc915bd's serial: serial, 2 workers (issue 37)


def compare_workers(trees: dict[str, Path], rounds: int, examples: Path, workers: int) -> None:
    """Issue 37's figures, all in one run, alternating: exploration points/s in process and forked (this tree),
    points/s in process of each baseline, and the whole pytest wall of every tree serially against this tree's
    with forked workers."""
    ours = trees["this tree"]
    rates: dict[str, list[float]] = {}
    cpu_rates: dict[str, list[float]] = {}
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    loads = [os.getloadavg()[0]]
    temp_root = tempfile.mkdtemp(prefix="bench-chaos-pytest-", dir=os.environ.get("STRANDS_CHAOS_TMPDIR"))
    pytest_args = [sys.executable, "-m", "pytest", "--strands-chaos", str(examples), "-q", "-p", "no:cacheprovider"]
    for src in trees.values():  # untimed: the bytecode caches a first run on an ordinary install writes
        _in_tree(src, [*pytest_args, "-n", "0"], bytecode_cache=True, PYTEST_DEBUG_TEMPROOT=temp_root)
    for _ in range(rounds):
        for name, src in trees.items():
            command = [sys.executable, __file__, "--examples-rate-only", "--examples", str(examples)]
            if src == ours:
                command += ["--workers", str(workers)]
            done = _in_tree(src, command, bytecode_cache=True)
            if done.returncode != 0:
                raise SystemExit(f"Error: the {name} tree's examples run failed:\n{done.stderr[-2000:]}")
            measured = json.loads(done.stdout.strip().splitlines()[-1])
            if src == ours:
                rates.setdefault("this tree, in process", []).append(measured["serial"])
                rates.setdefault(f"this tree, {workers} forked workers", []).append(measured["forked"])
                cpu_rates.setdefault("this tree, in process", []).append(measured["serial_cpu"])
                cpu_rates.setdefault(f"this tree, {workers} forked workers", []).append(measured["forked_cpu"])
            else:
                rates.setdefault(f"{name}, in process", []).append(measured["points_per_s"])
                cpu_rates.setdefault(f"{name}, in process", []).append(measured["points_per_cpu_s"])
            runs = _whole_runs(workers) if src == ours else [(f"{name}, -n 0", [])]
            for label, extra in runs:
                start, used = time.perf_counter(), _children_cpu()
                done = _in_tree(
                    src, [*pytest_args, "-n", "0", *extra], bytecode_cache=True, PYTEST_DEBUG_TEMPROOT=temp_root
                )
                walls.setdefault(label, []).append(time.perf_counter() - start)
                cpus.setdefault(label, []).append(_children_cpu() - used)
                if done.returncode != 0:
                    raise SystemExit(f"Error: {label} failed:\n{done.stdout[-2000:]}")
        loads.append(os.getloadavg()[0])
    shutil.rmtree(temp_root, ignore_errors=True)
    print(f"load average (1 min) at the start and after each round: {', '.join(f'{x:.1f}' for x in loads)}")
    rate = {label: _median_line(f"exploration, {label}", values, "points/s") for label, values in rates.items()}
    for label, values in cpu_rates.items():
        _median_line(f"exploration, {label}", values, "points/CPU s")
    wall = {label: _median_line(f"pytest --strands-chaos examples/, {label}", v, "s") for label, v in walls.items()}
    cpu = {label: _median_line(f"  CPU seconds of all its processes, {label}", v, "s") for label, v in cpus.items()}
    serial, forked = rate["this tree, in process"], rate[f"this tree, {workers} forked workers"]
    print(f"exploration, forked / in process: {forked / serial:.2f}x (target >= {TARGET_FORKED}x with 2 workers)")
    per_cpu = statistics.median(cpu_rates[f"this tree, {workers} forked workers"]) / statistics.median(
        cpu_rates["this tree, in process"]
    )
    cores_here = min(workers, len(os.sched_getaffinity(0)))
    print(
        f"exploration, points per CPU second forked / in process: {per_cpu:.2f}x, so {per_cpu * cores_here:.2f}x is "
        f"the wall ratio on {cores_here} otherwise idle cores (the parent waits while the workers run)"
    )
    for name in trees:
        if name == "this tree":
            continue
        base_rate, base_wall, base_cpu = rate[f"{name}, in process"], wall[f"{name}, -n 0"], cpu[f"{name}, -n 0"]
        print(f"exploration in process, this tree / {name}: {serial / base_rate:.2f}x (target: 200 points/s)")
        for orders in ORDERS:
            (serial_label, _), (forked_label, _) = _whole_runs(workers, orders)
            target = f" (target <= {TARGET_WALL[0]})" if orders == "golden" else ""
            forked_target = f" (target <= {TARGET_WALL[1]})" if orders == "golden" else ""
            print(
                f"whole wall / {name} serial, this tree with {orders} orders: serial "
                f"{wall[serial_label] / base_wall:.2f}{target}, {workers} workers "
                f"{wall[forked_label] / base_wall:.2f}{forked_target}"
            )
            print(
                f"whole CPU / {name} serial, this tree with {orders} orders: serial "
                f"{cpu[serial_label] / base_cpu:.2f}, {workers} workers {cpu[forked_label] / base_cpu:.2f}"
            )


def compare_whole(trees: dict[str, Path], rounds: int, examples: Path) -> None:
    """Issue 37's whole serial run alone: `pytest --strands-chaos examples/ -n 0` of every tree in fresh processes,
    alternating `rounds` times (this tree with `--strands-chaos-orders=golden`, a baseline as it is), wall and CPU
    seconds, where each process's CPU went (bench/xdist_probe.py), and this tree's ratios to each baseline."""
    walls: dict[str, list[float]] = {name: [] for name in trees}
    cpus: dict[str, list[float]] = {name: [] for name in trees}
    splits: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    loads = [os.getloadavg()[0]]
    temp_root = tempfile.mkdtemp(prefix="bench-chaos-pytest-", dir=os.environ.get("STRANDS_CHAOS_TMPDIR"))
    base = [sys.executable, "-m", "pytest", "--strands-chaos", str(examples), "-q", "-p", "no:cacheprovider", "-n", "0"]
    for src in trees.values():  # untimed: the bytecode caches a first run on an ordinary install writes
        _in_tree(src, base, bytecode_cache=True, PYTEST_DEBUG_TEMPROOT=temp_root)
    for _ in range(rounds):
        for name, src in trees.items():
            command = [*base, "--strands-chaos-orders=golden"] if name == "this tree" else base
            wall, cpu, split, done = _probed_run(src, command, temp_root, bytecode_cache=True)
            if done.returncode != 0:
                raise SystemExit(f"Error: the {name} tree's whole run failed:\n{done.stdout[-2000:]}")
            walls[name].append(wall)
            cpus[name].append(cpu)
            splits[name].append(split)
        loads.append(os.getloadavg()[0])
    shutil.rmtree(temp_root, ignore_errors=True)
    print(f"load average (1 min) at the start and after each round: {', '.join(f'{x:.1f}' for x in loads)}")
    for name in trees:
        _median_line(f"pytest --strands-chaos examples/ -n 0, {name}", walls[name], "s")
        _median_line(f"  CPU seconds, {name}", cpus[name], "s")
        print_split(f"  CPU split, {name}", splits[name])
    ours = "this tree"
    for name in trees:
        if name == ours:
            continue
        paired = [a / b for a, b in zip(walls[ours], walls[name], strict=True)]
        paired_cpu = [a / b for a, b in zip(cpus[ours], cpus[name], strict=True)]
        print(
            f"whole serial run, this tree (golden orders) / {name}: wall {statistics.median(paired):.2f}, "
            f"CPU {statistics.median(paired_cpu):.2f} (paired medians; target <= {TARGET_WALL[0]} wall)"
        )


ORDERS = ("golden", "default")  # this tree's whole runs: the target with golden orders, the default too


def _whole_runs(workers: int, *orders: str) -> list[tuple[str, list[str]]]:
    """This tree's whole pytest runs (label, extra arguments): serial and with `workers` forked workers, with each
    of `orders` (default: both). A baseline before the orders option (fc915bd) runs without it."""
    runs = []
    for order in orders or ORDERS:
        flags = [f"--strands-chaos-orders={order}"] if order != "default" else []
        runs.append((f"this tree, -n 0, {order} orders", flags))
        runs.append(
            (
                f"this tree, -n 0 --strands-chaos-workers={workers}, {order} orders",
                [*flags, f"--strands-chaos-workers={workers}"],
            )
        )
    return runs


def _in_tree(src: Path, args: list[str], *, bytecode_cache: bool, **env_vars: str) -> subprocess.CompletedProcess[str]:
    """Run `args` in a fresh process whose `strands_durable` and `pytest_strands` come from `src`; with
    `bytecode_cache` (unless `--no-bytecode-cache`), with Python's bytecode cache on, as on an ordinary install: an
    environment that sets PYTHONDONTWRITEBYTECODE makes every process compile our modules and pytest rewrite its
    plugins again at start (~80 ms of CPU per xdist worker measured), which a serial run pays once and `-n 2` thrice."""
    env = {**os.environ, "PYTHONPATH": str(src), **env_vars}
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return subprocess.run(args, env=env, capture_output=True, text=True, check=False)


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _median_line(label: str, values: list[float], unit: str) -> float:
    shown = ", ".join(f"{v:.1f}" if unit.startswith("points") else f"{v:.2f}" for v in values)
    middle = statistics.median(values)
    print(f"{label}: {shown}: median {middle:.2f} {unit}")
    return middle


TUNED = "this tree, --strands-chaos-freeze-gc"  # this tree with the collector tuning on (faults/kit/collector.py)


def compare_trees(
    trees: dict[str, Path], rounds: int, xdist: bool, examples: Path, *, bytecode_cache: bool = True
) -> None:
    """Points/s per tree (fresh process each, alternating), and with `xdist` the whole plugin run serial vs -n 2;
    the tree named `TUNED` runs with the collector tuning on."""
    rates: dict[str, list[float]] = {name: [] for name in trees}
    cpu_rates: dict[str, list[float]] = {name: [] for name in trees}
    walls: dict[tuple[str, str], list[float]] = {(name, n): [] for name in trees for n in ("0", "2")}
    cpus: dict[tuple[str, str], list[float]] = {(name, n): [] for name in trees for n in ("0", "2")}
    splits: dict[tuple[str, str], list[dict[str, float]]] = {(name, n): [] for name in trees for n in ("0", "2")}
    # pytest's temporary directories of its own: an xdist controller makes a numbered base directory and, at its
    # end, deletes the oldest ones beyond three, so under the shared /tmp it paid for other sessions' leftovers
    # (5 s once the whole test suite had left 200 MB there; a serial chaos run makes none and never pays)
    temp_root = tempfile.mkdtemp(prefix="bench-chaos-pytest-", dir=os.environ.get("STRANDS_CHAOS_TMPDIR"))
    print(
        f"bytecode cache: {'on (warmed by one untimed run per tree)' if bytecode_cache else 'as the environment says'}"
    )
    if xdist and bytecode_cache:
        warm = [sys.executable, "-m", "pytest", "--strands-chaos", str(examples), "-q", "-p", "no:cacheprovider"]
        for src in trees.values():  # untimed: writes the caches a first run on an ordinary install writes
            _in_tree(src, [*warm, "-n", "2"], bytecode_cache=True, PYTEST_DEBUG_TEMPROOT=temp_root)
    for _ in range(rounds):
        for name, src in trees.items():
            done = _in_tree(
                src,
                [sys.executable, __file__, "--examples-rate-only", "--examples", str(examples)]
                + (["--freeze-gc"] if name == TUNED else []),
                bytecode_cache=bytecode_cache,
            )
            if done.returncode != 0:
                raise SystemExit(f"Error: the {name} tree's examples run failed:\n{done.stderr[-2000:]}")
            measured = json.loads(done.stdout.strip().splitlines()[-1])
            rates[name].append(measured["points_per_s"])
            cpu_rates[name].append(measured["points_per_cpu_s"])
            if not xdist:
                continue
            for n in ("0", "2"):
                command = [sys.executable, "-m", "pytest", "--strands-chaos", str(examples), "-q"]
                command += ["-p", "no:cacheprovider", "-n", n]
                command += ["--strands-chaos-freeze-gc"] if name == TUNED else []
                wall, cpu, split, done = _probed_run(src, command, temp_root, bytecode_cache=bytecode_cache)
                if done.returncode != 0:
                    raise SystemExit(f"Error: the {name} tree's pytest -n {n} failed:\n{done.stdout[-2000:]}")
                walls[(name, n)].append(wall)
                cpus[(name, n)].append(cpu)
                splits[(name, n)].append(split)
    shutil.rmtree(temp_root, ignore_errors=True)
    medians = {name: _median_line(f"examples, {name}", rates[name], "points/s") for name in trees}
    cpu_medians = {name: _median_line(f"examples, {name}", cpu_rates[name], "points/CPU s") for name in trees}
    names = list(trees)
    ours, ours_cpu = medians["this tree"], cpu_medians["this tree"]
    print(f"points/s, this tree: {ours:.1f} wall, {ours_cpu:.1f} CPU (target >= {TARGET_RATE})")
    for name in names[1:]:
        print(
            f"points/s {name} / {names[0]}: {medians[name] / medians[names[0]]:.2f}x wall, "
            f"{cpu_medians[name] / cpu_medians[names[0]]:.2f}x CPU"
        )
    if xdist:
        for name in trees:
            serial = _median_line(f"pytest --strands-chaos examples/ -n 0, {name}", walls[(name, "0")], "s")
            two = _median_line(f"pytest --strands-chaos examples/ -n 2, {name}", walls[(name, "2")], "s")
            _median_line(f"  CPU seconds of all its processes, -n 0, {name}", cpus[(name, "0")], "s")
            _median_line(f"  CPU seconds of all its processes, -n 2, {name}", cpus[(name, "2")], "s")
            print_split(f"  CPU split, -n 0, {name}", splits[(name, "0")])
            print_split(f"  CPU split, -n 2, {name}", splits[(name, "2")])
            paired = [a / b for a, b in zip(walls[(name, "0")], walls[(name, "2")], strict=True)]
            print(
                f"serial / -n 2, {name}: {serial / two:.2f}x (paired median {statistics.median(paired):.2f}x; "
                f"target >= {TARGET_XDIST}x)"
            )
            cores = len(os.sched_getaffinity(0))
            ceilings = [w / (c / cores) for w, c in zip(walls[(name, "0")], cpus[(name, "2")], strict=True)]
            print(
                f"  ceiling on {cores} cores, {name}: serial wall / (CPU of all -n 2 processes / {cores}) = "
                f"{statistics.median(ceilings):.2f}x (paired median): no -n 2 run using this much CPU is faster"
            )


def _probed_run(
    src: Path, command: list[str], temp_root: str, *, bytecode_cache: bool
) -> tuple[float, float, dict[str, float], subprocess.CompletedProcess[str]]:
    """One pytest process of `src` with bench/xdist_probe.py loaded: its wall and CPU seconds (all its processes),
    where that CPU went (`cpu_split`), and the finished process."""
    probe = Path(temp_root) / "probe.jsonl"
    probe.unlink(missing_ok=True)
    start, used = time.perf_counter(), _children_cpu()
    done = _in_tree(
        src,
        [*command, "-p", "xdist_probe"],
        bytecode_cache=bytecode_cache,
        PYTEST_DEBUG_TEMPROOT=temp_root,
        PYTHONPATH=f"{src}{os.pathsep}{BENCH}",
        BENCH_XDIST_PROBE=str(probe),
    )
    wall, cpu = time.perf_counter() - start, _children_cpu() - used
    return wall, cpu, cpu_split(probe, cpu), done


COLLECTOR = "of these, in the collector before unconfigure"  # a part of the others, not one more


def cpu_split(probe: Path, total: float) -> dict[str, float]:
    """One run's CPU seconds by process and phase, from `xdist_probe`'s lines and the run's total; `COLLECTOR` is
    the share of the phases before unconfigure spent in the cyclic collector."""
    lines = [json.loads(line) for line in probe.read_text().splitlines()] if probe.exists() else []
    split = {"after unconfigure": total - sum(line["unconfigure_cpu"] for line in lines)}
    for line in lines:
        if line["process"] == "controller":
            split["controller"] = line["unconfigure_cpu"]
            continue
        first = line["first_item_cpu"] or line["unconfigure_cpu"]
        label = "workers" if line["process"] != "serial" else "process"
        schedules, calls = line["schedules_cpu"], line["calls_cpu"]
        parts = {
            "to the first item": first,
            "in items' runs": calls,
            "around items (pytest, plugins' hooks)": line["unconfigure_cpu"] - first - schedules - calls,
            "in schedules items": schedules,
        }
        for part, seconds in parts.items():
            split[f"{label} {part}"] = split.get(f"{label} {part}", 0.0) + seconds
        split[COLLECTOR] = split.get(COLLECTOR, 0.0) + line["collector_cpu"]
    return split


def print_split(label: str, splits: list[dict[str, float]]) -> None:
    """The median of each part over the runs."""
    if not splits:
        return
    last = ["after unconfigure", COLLECTOR]
    parts = [key for key in splits[0] if key not in last] + [key for key in last if key in splits[0]]
    shown = ", ".join(f"{key} {statistics.median(s.get(key, 0.0) for s in splits):.2f}" for key in parts)
    print(f"{label} (s): {shown}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points-per-chain", type=int, default=60)
    parser.add_argument(
        "--chain-steps",
        type=lambda text: [int(part) for part in text.split(",")],
        default=[10, 50],
        help="the chain lengths compared, the first the reference (issue 37: 10,50)",
    )
    parser.add_argument(
        "--baseline", type=Path, action="append", help="the src directory of a tree to compare with (repeatable)"
    )
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds with --baseline or --xdist")
    parser.add_argument("--xdist", action="store_true", help="also time the whole pytest run, -n 0 vs -n 2")
    parser.add_argument("--chains-only", action="store_true", help="only the 50 vs 10-step cost per point")
    parser.add_argument("--own-work", action="store_true", help="issue 37: the explorer's own CPU per crash point")
    parser.add_argument("--examples", type=Path, default=REPO / "examples", help="the specs measured (examples/)")
    parser.add_argument("--examples-rate-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, help="issue 37: forked workers against the baselines (see above)")
    parser.add_argument("--whole", action="store_true", help="issue 37: only the whole serial runs (see above)")
    parser.add_argument("--segments", action="store_true", help="issue 37: derived crash states vs real segments")
    parser.add_argument("--resumes", action="store_true", help="issue 37: the cost of one resume, cold vs warm")
    parser.add_argument(
        "--freeze-gc", action="store_true", help="also measure this tree with --strands-chaos-freeze-gc (a tree more)"
    )
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE in the children if the environment sets it (default: the cache on)",
    )
    args = parser.parse_args()
    workdir = default_workdir()
    # Every scratch directory of this run and of the processes it starts (which inherit STRANDS_CHAOS_TMPDIR and
    # make theirs inside) lives under `workdir`, removed when the run ends, however it ends.
    os.environ["STRANDS_CHAOS_TMPDIR"] = str(workdir)
    try:
        _measure(args, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _measure(args: argparse.Namespace, workdir: Path) -> None:
    """What the command line asks for, with `workdir` as this process's scratch space."""
    if args.resumes:
        compare_resumes(workdir, args.examples.resolve(), args.rounds)
        return
    if args.segments:
        compare_segments(workdir, args.examples.resolve(), args.rounds)
        return
    if args.own_work:
        for _ in range(args.rounds):
            own_work(workdir / f"own-{_}", args.examples.resolve())
        return
    if args.examples_rate_only and args.workers:
        print(json.dumps(forked_rates(workdir, args.examples.resolve(), args.workers)))
        return
    if args.whole:
        trees = {str(src): src.resolve() for src in args.baseline or []}
        trees["this tree"] = REPO / "src"
        compare_whole(trees, args.rounds, args.examples.resolve())
        return
    if args.workers:
        trees = {str(src): src.resolve() for src in args.baseline or []}
        trees["this tree"] = REPO / "src"
        compare_workers(trees, args.rounds, args.examples.resolve(), args.workers)
        return
    if args.examples_rate_only:
        if args.freeze_gc:
            from strands_durable.faults.kit.collector import collect_less_during_points

            collect_less_during_points(True)
        wall, cpu = examples_rate(workdir, args.examples.resolve(), quiet=True)
        print(json.dumps({"points_per_s": wall, "points_per_cpu_s": cpu}))
        return
    if args.baseline is not None or args.xdist:
        trees = {str(src): src.resolve() for src in args.baseline or []}
        if args.freeze_gc:
            trees[TUNED] = REPO / "src"
        trees["this tree"] = REPO / "src"
        compare_trees(
            trees, args.rounds, args.xdist, args.examples.resolve(), bytecode_cache=not args.no_bytecode_cache
        )
        return
    print(f"scratch: {workdir}")
    if not args.chains_only:
        examples_rate(workdir, args.examples.resolve())

    compare_chains(workdir, args.points_per_chain, args.rounds, args.chain_steps)


def compare_chains(workdir: Path, points_per_chain: int, rounds: int, lengths: list[int]) -> None:
    """The cost of one crash point on chains of `lengths` steps against the first (issue 37: 50 against 10), for
    one agent per step and for one agent for all steps: golden runs and exactness samples first (printed, not
    timed), then the same number of points of each chain explored `rounds` times, the chains alternating within
    each round; medians per point compared."""
    from strands_durable.faults.classes.explore import _sample_verdicts

    specs = Path(tempfile.mkdtemp(dir=workdir))
    for shared in (False, True):
        label = "one agent" if shared else "one agent per step"
        chains = {}
        for steps in lengths:
            spec = specs / f"chain-{steps}-{'shared' if shared else 'distinct'}.strands.yaml"
            spec.write_text(chain_spec(steps, shared_agent=shared))
            golden = run_golden(ChaosTarget(spec), workdir / spec.stem / "golden")
            start = time.perf_counter()
            _sample_verdicts(golden, workdir / spec.stem / "points" / "real-segment")
            ids = list(iter_points(golden, points_per_chain, 0))
            print(
                f"  {spec.stem}: {len(golden.points)} points, {len(ids)} explored; exactness sample of "
                f"{len(golden.checked_points())} points: {time.perf_counter() - start:.2f} s, before the timing"
            )
            chains[steps] = (golden, ids, workdir / spec.stem / "points")
        walls: dict[int, list[float]] = {steps: [] for steps in lengths}
        cpus: dict[int, list[float]] = {steps: [] for steps in lengths}
        for _ in range(rounds):
            for steps, (golden, ids, points) in chains.items():
                start, cpu = time.perf_counter(), time.process_time()
                for point_id in ids:
                    outcome = explore_point(golden, point_id, points)
                    if not outcome.ok:
                        print("  FAILED " + outcome.describe().replace("\n", "\n  "))
                walls[steps].append((time.perf_counter() - start) / len(ids))
                cpus[steps].append((time.process_time() - cpu) / len(ids))
        wall = {steps: statistics.median(values) for steps, values in walls.items()}
        cpu = {steps: statistics.median(values) for steps, values in cpus.items()}
        for steps in lengths:
            print(
                f"chain of {steps:2d} steps ({label}): {wall[steps] * 1000:.1f} ms per point "
                f"({cpu[steps] * 1000:.1f} CPU ms), median of {rounds} rounds"
            )
        first = lengths[0]
        for steps in lengths[1:]:
            target = "; target: <= 1.2" if (first, steps) == (10, 50) else ""
            print(
                f"cost per crash point, {steps} vs {first} steps ({label}): ratio {wall[steps] / wall[first]:.2f} "
                f"(CPU {cpu[steps] / cpu[first]:.2f}{target})"
            )


if __name__ == "__main__":
    main()
