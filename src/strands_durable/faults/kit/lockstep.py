"""One lockstep step of two racing resumers, shared by spec workflows (`classes/lockstep.py`) and Python agents
(`agents/lockstep.py`).

A first resumer, in a child process, runs until right after its i-th store commit and stops there (`holding`: a
crash-point subscriber that writes a marker and waits on a pipe), holding the session; a second resumer, another
child, runs until it errors or finishes; then the first goes on. Exactly one must proceed (exit 0) and the other
be refused as the session is in use (exit 17, raised as `SessionInUse` or `SessionFenced`: the second resumer
names the error it got in a scratch file next to the marker); each deviation is a `lease` finding. The same holds
for every store the kit's runs use (`kit/stores.py`: local directories, or S3 with fenced leases).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from strands_durable.crashpoints import CrashPoint
from strands_durable.errors import ExitCode
from strands_durable.faults.kit.findings import FaultRun
from strands_durable.faults.kit.forking import ChildExit, fork_child, poll_child, run_in_child, wait_child
from strands_durable.faults.kit.scratch import remove_scratch, write_scratch

HOLD_SECONDS = 60  # how long the parent waits for the first resumer to stop or end
PROCEEDED = ChildExit(0, None)
REFUSED = ChildExit(int(ExitCode.SESSION_UNUSABLE), None)
REFUSALS = ("SessionInUse", "SessionFenced")  # the errors a resumer meeting a held session may raise
VARIANT = "lockstep"


@dataclass(frozen=True)
class StopAt:
    """Where the first resumer stops: right after its `commit`-th store commit (from 0), writing `marker`, until
    the parent closes the other end of the pipe `gate`."""

    commit: int
    marker: Path
    gate: int


@dataclass(frozen=True)
class Race:
    """How the two resumers of one step ended."""

    first: ChildExit
    second: ChildExit
    refusal: str = ""  # the type of the error the second resumer raised, if it raised one

    @property
    def one_proceeded(self) -> bool:
        return (self.first, self.second) == (PROCEEDED, REFUSED) and self.refusal in REFUSALS


def holding(stop: StopAt, counts: Callable[[CrashPoint], bool] = lambda point: True) -> Callable[[CrashPoint], None]:
    """A crash-point subscriber that stops its process right after the store commit `stop.commit` among those
    `counts` accepts."""
    seen = [0]

    def hold(point: CrashPoint) -> None:
        if point.site != "store.after_commit" or not counts(point):
            return
        seen[0] += 1
        if seen[0] == stop.commit + 1:
            write_scratch(stop.marker, point.id.encode())
            os.read(stop.gate, 1)  # returns once the parent closed the pipe's other end

    return hold


def race_at_commit(
    run: FaultRun, point: str, commit: int, marker: Path, resume: Callable[[StopAt | None], int]
) -> Race | None:
    """One step: `resume(StopAt)` in a first child stopped after `commit`, `resume(None)` in a second; None when
    the first finished before reaching that commit (every commit has been explored; a failed finish is a
    `resume-failed` finding)."""
    remove_scratch(marker)
    gate_read, gate_write = os.pipe()

    def first() -> int:
        os.close(gate_write)
        return resume(StopAt(commit, marker, gate_read))

    holder = fork_child(first)
    os.close(gate_read)
    ended = stopped_or_ended(marker, holder)
    if ended is not None:
        os.close(gate_write)
        if ended != PROCEEDED:
            run.add(point, VARIANT, "resume-failed", f"the resumer ended with {ended.describe()}")
        return None
    run.explore_at(point)
    named = marker.with_name(marker.name + ".refusal")
    remove_scratch(named)
    second = run_in_child(lambda: _naming_refusal(resume, named))
    os.close(gate_write)  # the first goes on
    race = Race(wait_child(holder), second, named.read_text() if named.exists() else "")
    if race.first != PROCEEDED:
        detail = f"the first resumer, stopped after commit {commit}, ended with {race.first.describe()}"
        run.add(point, VARIANT, "lease", detail)
    if race.second != REFUSED:
        detail = f"a second resumer while the first held the session ended with {race.second.describe()}, not exit 17"
        run.add(point, VARIANT, "lease", detail)
    elif race.refusal not in REFUSALS:
        detail = f"a second resumer was refused with {race.refusal or 'no error'}, not {' or '.join(REFUSALS)}"
        run.add(point, VARIANT, "lease", detail)
    return race


def _naming_refusal(resume: Callable[[StopAt | None], int], named: Path) -> int:
    """The second resumer: `resume(None)`, writing the type of a durable error it raises to `named`."""
    from strands_durable.errors import DurableError

    try:
        return resume(None)
    except DurableError as exc:
        write_scratch(named, type(exc).__name__.encode())
        raise


def stopped_or_ended(marker: Path, pid: int) -> ChildExit | None:
    """None once `marker` exists (the child stopped where asked); how the child ended if it ended first."""
    deadline = time.monotonic() + HOLD_SECONDS
    while not marker.exists():
        ended = poll_child(pid)
        if ended is not None:
            return ended
        if time.monotonic() > deadline:
            raise RuntimeError(f"a resumer neither stopped nor ended within {HOLD_SECONDS} s")
        time.sleep(0.002)
    return None
