"""Forked children, a few at a time: each job is a chain of steps (a crash, then its resume), each step one child
forked from the warm parent when the step before it ended, stopped with SIGKILL after the per-run limit."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from strands_durable.faults.kit.forking import ChildExit, _decode, fork_child

Body = Callable[[], int | None]
Step = Callable[[], Body | None]  # decides its child's body when it starts (None: the chain ends here)
FORKED = [0]  # children forked by this process so far (the bench's count)


@dataclass
class Job:
    """A chain of steps; what each of its children did."""

    name: str
    steps: list[Step]
    exits: list[ChildExit] = field(default_factory=list)
    overran: list[int] = field(default_factory=list)  # indexes of steps stopped after the per-run limit

    def _next(self) -> Body | None:
        while len(self.exits) < len(self.steps):
            body = self.steps[len(self.exits)]()
            if body is not None:
                return body
            self.exits.append(ChildExit(0, None))  # a step with nothing to do
        return None


def run_jobs(jobs: list[Job], *, workers: int, limit_s: float) -> None:
    """Run every job's steps, at most `workers` children alive at once; a child alive after `limit_s` is killed
    and its step marked in `overran`."""
    waiting: Iterator[Job] = iter(jobs)
    alive: dict[int, tuple[Job, float]] = {}

    def start(job: Job) -> bool:
        body = job._next()
        if body is None:
            return False
        alive[fork_child(body)] = (job, time.monotonic() + limit_s)
        FORKED[0] += 1
        return True

    def fill() -> None:
        while len(alive) < workers:
            job = next(waiting, None)
            if job is None:
                return
            start(job)

    fill()
    pause = 0.0005
    while alive:
        ended = False
        for pid, (job, deadline) in list(alive.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if not done and time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
                job.overran.append(len(job.exits))
                done = pid
            if done:
                del alive[pid]
                job.exits.append(_decode(status))
                ended = True
                if not start(job):
                    fill()
        if not ended:
            time.sleep(pause)
            pause = min(pause * 2, 0.005)
        else:
            pause = 0.0005
