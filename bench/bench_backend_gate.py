"""The backend gate's time for a backend author's CI: the manager-level gate over the built-in conversation, with
a SIGKILL at every crash point, both resume styles and two resumers, on a local backend (ours,
`DurableSessionManager` on local files), and the SDK's `FileSessionManager` for comparison.

    .venv/bin/python bench/bench_backend_gate.py [--rounds 1] [--backend durable|sdk-file|both]

Prints, per backend: the crash points it assumes, the children forked, the wall time per phase, the CPU used
(the gate's process and its children) and the load average while it ran; then the target (60 s). The machine may
be shared: the CPU seconds over the cores bound what an idle 2-core machine would take (`cpu / cores`).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from typing import Any

from strands_durable.faults.backends import run_backend_gate
from strands_durable.testing.backends import durable_manager

TARGET_S = 60.0


def sdk_file(ctx: Any) -> Any:
    from strands.session.file_session_manager import FileSessionManager

    return FileSessionManager(ctx.session_id, storage_dir=str(ctx.directory))


BACKENDS = {"durable": durable_manager, "sdk-file": sdk_file}


def cpu_seconds() -> float:
    """CPU of this process and of its children waited for (the gate's forked runs)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def measure(name: str) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    cpu_before = cpu_seconds()
    started = time.monotonic()
    report = run_backend_gate(BACKENDS[name], name=name)
    wall = time.monotonic() - started
    cpu = cpu_seconds() - cpu_before
    return {
        "wall": wall,
        "cpu": cpu,
        "points": report.crash_points,
        "children": report.children,
        "phases": report.phases,
        "load": (load_before + os.getloadavg()[0]) / 2,
        "level": report.level,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--backend", choices=[*BACKENDS, "both"], default="both")
    args = parser.parse_args()
    names = list(BACKENDS) if args.backend == "both" else [args.backend]
    cores = os.cpu_count() or 1
    for name in names:
        rounds = [measure(name) for _ in range(args.rounds)]
        wall = statistics.median(r["wall"] for r in rounds)
        cpu = statistics.median(r["cpu"] for r in rounds)
        last = rounds[-1]
        phases = ", ".join(f"{phase} {seconds:.1f} s" for phase, seconds in last["phases"].items())
        print(
            f"{name}: {last['points']} crash points, {last['children']} children, level {last['level']}: "
            f"{wall:.1f} s wall (median of {len(rounds)}; load average {last['load']:.1f} on {cores} cores), "
            f"CPU {cpu:.1f} s -> {cpu / cores:.1f} s on {cores} idle cores; "
            f"{cpu / max(1, last['children']) * 1000:.0f} ms CPU per child"
        )
        print(f"  where the time goes: {phases}")
    print(f"target: the manager-level gate of a local backend within {TARGET_S:.0f} s on 2 cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
