"""A worker process for the Temporal tests: today's worker, or one serving a frozen earlier workflow release, whose
unit attempts write their model calls and tools to a ledger and can hold still at one boundary.

    python -m tests.temporal.worker_main --temporal ADDR --sessions-dir DIR --task-queue Q
        [--release 1] [--ledger FILE] [--hold-at SITE@PATH-PREFIX] [--hold-seconds S]

The ledger gets one line per crash point of interest, `<pid> <site> <path>`: `model.before` (a request is sent to
the model), `model.answered`, `tool.before`, `tool.committed`. `--hold-at` sleeps at the first such point of that
site whose path starts with the prefix (once per process), so a test can SIGKILL the worker exactly there.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import threading
import time

from strands_durable import CrashPoints
from strands_durable.crashpoints import CrashPoint
from strands_durable.temporal.engine import run_worker

LEDGER_SITES = ("model.before", "model.answered", "tool.before", "tool.committed")


class Observer:
    """Appends the ledger lines and holds still once at the chosen point."""

    def __init__(self, ledger: str | None, hold_at: str | None, hold_seconds: float) -> None:
        self.ledger = ledger
        self.hold_site, _, self.hold_prefix = (hold_at or "").partition("@")
        self.hold_seconds = hold_seconds
        self.held = threading.Event()
        self.lock = threading.Lock()

    def bus(self) -> CrashPoints:
        crash = CrashPoints()
        crash.subscribe(self.observe)
        return crash

    def observe(self, point: CrashPoint) -> None:
        if point.site not in LEDGER_SITES:
            return
        if self.ledger:
            with self.lock, open(self.ledger, "a", encoding="utf-8") as handle:
                handle.write(f"{os.getpid()} {point.site} {point.path}\n")
        hold = point.site == self.hold_site and point.path.startswith(self.hold_prefix)
        if hold and not self.held.is_set():
            self.held.set()
            if self.ledger:
                with self.lock, open(self.ledger, "a", encoding="utf-8") as handle:
                    handle.write(f"{os.getpid()} holding {point.path}\n")
            time.sleep(self.hold_seconds)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--temporal", required=True)
    parser.add_argument("--sessions-dir", required=True)
    parser.add_argument("--task-queue", required=True)
    parser.add_argument("--release", type=int, default=0, help="serve a frozen release's workflow (0: today's)")
    parser.add_argument("--ledger")
    parser.add_argument("--hold-at")
    parser.add_argument("--hold-seconds", type=float, default=60.0)
    args = parser.parse_args()
    workflow = None
    if args.release == 1:
        from tests.temporal.workflow_v1 import DurableRun

        workflow = DurableRun
    observer = Observer(args.ledger, args.hold_at, args.hold_seconds)
    observed = args.ledger or args.hold_at

    def ready() -> None:
        print(f"Worker on {args.temporal} (release {args.release or 'today'}) task queue {args.task_queue}", flush=True)

    asyncio.run(
        run_worker(
            args.temporal,
            args.sessions_dir,
            task_queue=args.task_queue,
            ready=ready,
            workflow=workflow,
            crash_points=observer.bus if observed else None,
        )
    )


if __name__ == "__main__":
    main()
