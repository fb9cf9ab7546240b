"""The manager level: the built-in conversation's golden run, then for every crash point two runs SIGKILLed
there, each resumed in one of the two styles a user would (`agent()` when something is pending, re-sending the
interrupted prompt), each judged clause by clause (faults/backends/clauses.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoint
from strands_durable.faults.agents.run import STYLES
from strands_durable.faults.backends import children
from strands_durable.faults.backends.children import Place, Setup, read_record
from strands_durable.faults.backends.pool import Job, run_jobs
from strands_durable.faults.kit.findings import Finding
from strands_durable.faults.kit.scratch import reset_dir
from strands_durable.store.fileops import FileOps

FACTORY_KILLS = 4  # seeded kill times inside the factory call (session creation happens there)
FACTORY_POINT = "factory/kill@{}of{}"

_ops = FileOps()  # the harness's own files (records of the children)


def factory_points() -> list[str]:
    return [FACTORY_POINT.format(i + 1, FACTORY_KILLS) for i in range(FACTORY_KILLS)]


@dataclass
class Golden:
    points: list[str]
    history: list[dict[str, Any]]
    ends: list[int]
    calls: int
    invalid: list[Any]
    created: list[Any]
    factory_seconds: float = 0.0

    def factory_kill(self, point: str) -> float:
        """Seconds into the factory call a `factory/kill@IofN` point kills: the I-th of N moments spread over the
        golden run's call, the first at its start (a killed run's call may be quicker than the golden one's: a
        moment past its end kills nothing, and the first one always lands inside)."""
        if not point.startswith("factory/kill@"):
            return 0.0
        index, count = (int(n) for n in point.removeprefix("factory/kill@").split("of"))
        return max(1e-5, self.factory_seconds * (index - 1) / count)


@dataclass
class PointRun:
    """One crash point in one resume style: the crashed run's record and the resume's."""

    point: str
    style: str
    place: Place
    crash: dict[str, Any] | None = None
    resume: dict[str, Any] | None = None
    overran: list[str] = field(default_factory=list)  # which runs the per-run limit stopped
    crash_exit: str = ""
    skipped: bool = False  # the re-send style, when the `agent()` resume found nothing pending (the same run)


class GoldenFailed(Exception):
    """The conversation does not run on the backend even without faults."""


def run_golden(setup: Setup, root: Path, *, limit_s: float) -> Golden:
    place = Place(root / "golden", "gate-golden")
    reset_dir(place.root)
    job = Job("golden", [lambda: lambda: children.golden(setup, place)])
    run_jobs([job], workers=1, limit_s=limit_s)
    record = read_record(place)
    if job.overran:
        raise GoldenFailed(f"the run without faults did not end within the per-run limit of {limit_s:g} s")
    if record is None:
        raise GoldenFailed(f"the run without faults failed ({job.exits[0].describe()})")
    return Golden(
        point_ids(record["points"]),
        record["history"],
        record["ends"],
        record["calls"],
        record["invalid"],
        record["created"],
        record["factory_seconds"],
    )


def point_ids(raw: list[Any]) -> list[str]:
    """The ids of the crash points a child passed (as `dump_points` wrote them)."""
    return [CrashPoint(site, path, occurrence).id for site, path, occurrence in raw]


def crash_everywhere(
    setup: Setup, root: Path, golden: Golden, *, points: Sequence[str], workers: int, limit_s: float
) -> list[PointRun]:
    """For each point: a run killed there resumed by `agent()`, then (only when that resume found an invocation
    pending: otherwise both styles re-send the prompt) another killed there and resumed by re-sending."""
    runs: list[PointRun] = []
    jobs = []
    for index, point in enumerate(points):
        pair = []
        for style in STYLES:
            tag = "a" if style == "agent()" else "r"
            place = Place(root / f"p{index}{tag}", f"gate-{index}{tag}")
            reset_dir(place.root)
            pair.append(PointRun(point, style, place))
        runs += pair
        first, second = pair
        steps = [*_steps(setup, first, golden), *_steps(setup, second, golden, after=first)]
        jobs.append((Job(point, steps), pair))
    run_jobs([job for job, _ in jobs], workers=workers, limit_s=limit_s)
    for job, pair in jobs:
        for offset, run in enumerate(pair):
            mine = (2 * offset, 2 * offset + 1)
            run.overran = [("killed run", "resume")[i - mine[0]] for i in job.overran if i in mine]
            if len(job.exits) > mine[0]:
                run.crash_exit = job.exits[mine[0]].describe()
    return runs


def _steps(setup: Setup, run: PointRun, golden: Golden, after: PointRun | None = None) -> list[Any]:
    """Kill, then resume; with `after`, only when `after`'s resume found something pending."""

    def crash() -> Any:
        if after is not None:
            resumed = read_record(after.place) if after.crash is not None else None
            if resumed is None or not resumed.get("pending"):
                run.skipped = True
                return None
        return lambda: children.crashing(setup, run.place, run.point, golden.factory_kill(run.point))

    def resume() -> Any:
        if run.skipped:
            return None
        run.crash = read_record(run.place)
        if run.crash is None or not run.crash.get("fired"):
            return None
        record = run.place.root / children.RECORD
        _ops.rename(record, record.with_name("crash.json"))
        start = run.crash["acknowledged"]
        return lambda: children.resuming(setup, run.place, run.style, start)

    return [crash, resume]


def read_resumes(runs: list[PointRun]) -> None:
    for run in runs:
        if run.crash is not None and run.crash.get("fired"):
            run.resume = read_record(run.place)


def factory_kills(runs: list[PointRun]) -> int:
    """How many `factory/kill@` points killed a run inside the factory call and had it resumed."""
    return len({run.point for run in runs if run.point.startswith("factory/") and run.resume is not None})


def not_fired(runs: list[PointRun]) -> list[Finding]:
    return [
        Finding("not-fired", f"the killed run never reached this point ({run.crash_exit})", "kill", run.point)
        for run in runs
        if not run.overran
        and not run.skipped
        and (run.crash is None or not (run.crash.get("fired") or run.crash.get("factory_returned")))
    ]
