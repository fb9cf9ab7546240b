"""`run_backend_gate(factory)`: the durability gate for any Strands session backend. The factory returns a
SessionManager, a SessionRepository or a Storage (detected in a child); every backend is driven through a manager
(faults/backends/children.py), killed at every crash point of the built-in conversation and resumed both ways
(explore.py), judged clause by clause (clauses.py), raced by two resumers (resumers.py); a repository or storage
is also held to the contract of its kind (contract.py), and a crash clause or `two-resumers` that fails as well over
a correct backend of its kind (strands_durable.testing.backends) is attributed to the SDK's layer. The answer is a
`BackendReport` (report.py)."""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from strands_durable.errors import DurableError, ExitCode
from strands_durable.faults.backends import children, clauses, contract, explore, resumers, teams
from strands_durable.faults.backends.context import (
    MANAGER,
    REPOSITORY,
    BackendFactory,
    BackendFactoryError,
    BackendUnavailable,
    GateContext,
    absent_clauses,
    build_backend,
    factory_name,
    resolve,
)
from strands_durable.faults.backends.pool import FORKED, Job, run_jobs
from strands_durable.faults.backends.report import (
    CRASH_CLAUSES,
    FAIL,
    NOT_APPLICABLE,
    PASS,
    BackendReport,
    ClauseResult,
)
from strands_durable.faults.kit.scratch import reset_dir, write_scratch
from strands_durable.store.fileops import FileOps

RUN_LIMIT_S = 60.0  # one run (the golden run, a killed run, a resume) longer than this is stopped: `liveness` fails
LEVEL_CHOICES = ("crash-safe", "message-durable", "concurrent-safe")
RACE_POINT = "two-resumers"  # the `--point` that runs only the two resumers' race
SDK_LAYER = {REPOSITORY: "RepositorySessionManager", "storage": "SnapshotSessionManager"}
_REFERENCE_FAILS: dict[tuple[str, tuple[str, ...] | None, int], set[str]] = {}  # (kind, points) -> crash clauses failed
_REFERENCE_RACE_FAILS: dict[str, bool] = {}  # kind -> whether two resumers fail over its correct backend too


def run_backend_gate(
    factory: BackendFactory | str,
    *,
    name: str | None = None,
    level: str | None = None,
    run_limit_s: float = RUN_LIMIT_S,
    points: Sequence[str] | None = None,
    every: int = 1,
    workers: int | None = None,
    workdir: Path | None = None,
) -> BackendReport:
    """Gate the backend `factory(ctx)` returns. `level` runs only the clauses that level asks for (the others are
    "not applicable"); `points` explores only those crash points (a failure's reproduction), `every` only every
    n-th point of the golden run (a quicker, partial gate: its report says so); `workers` children
    run at once (default: the CPU count); `run_limit_s` stops any one run (`liveness`). Raises BackendFactoryError
    (exit 2) or BackendUnavailable (exit 12) when the factory gives no backend."""
    if level is not None and level not in LEVEL_CHOICES:
        raise BackendFactoryError(f"--level: {level!r} is not one of {', '.join(LEVEL_CHOICES)}")
    label = name or factory_name(factory)
    made = resolve(factory)
    absent = absent_clauses(made)
    warm_imports()
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="strands-backend-gate-")) if workdir is None else workdir
    try:
        prefix = f"sdgate{os.getpid()}x{int(time.time() * 1000) % 10**9}"
        forked = FORKED[0]
        clock = PhaseClock()
        kind = detect_kind(made, label, root, prefix, run_limit_s)
        setup = children.Setup(made, kind, prefix)
        report = BackendReport(label, kind, phases=clock.phases)
        clock.lap("detect")
        if kind != MANAGER:
            report.clauses += _contract_results(made, kind, root, prefix, run_limit_s, label)
            clock.lap("contract")
        count = workers or os.cpu_count() or 2
        crash = _crash_clauses(setup, root, report, points, every, count, run_limit_s, clock)
        if kind != MANAGER:
            _attribute(crash, kind, points, every, count, run_limit_s)
            clock.lap("attribution")
        asked = points is None or RACE_POINT in points
        racing = "two-resumers" not in absent and level in (None, "concurrent-safe") and asked
        raced = _two_resumers(setup, root, label, run_limit_s) if racing else None
        clock.lap("two-resumers")
        report.children = FORKED[0] - forked
        for clause in CRASH_CLAUSES:
            result = crash[clause]
            report.clauses.append(
                _declarable(clause, result, absent, level) if clause == "durable-per-message" else result
            )
        report.clauses.append(_declarable("two-resumers", raced, absent, level))
        report.seconds = time.monotonic() - started
        return report
    finally:
        if workdir is None:
            FileOps().remove_tree(root)


class PhaseClock:
    """Seconds spent per phase of the gate (the bench's "where the time goes")."""

    def __init__(self) -> None:
        self.phases: dict[str, float] = {}
        self._last = time.monotonic()

    def lap(self, phase: str) -> None:
        now = time.monotonic()
        self.phases[phase] = self.phases.get(phase, 0.0) + now - self._last
        self._last = now


def warm_imports() -> None:
    """What every child uses, imported once here: each forked child then starts warm."""
    import strands.session.repository_session_manager
    import strands.session.snapshot_session_manager
    import strands.tools.executors  # noqa: F401

    import strands_durable.faults.agents.run
    import strands_durable.history
    import strands_durable.models.request
    import strands_durable.models.scripted
    import strands_durable.sdk.profiles  # noqa: F401
    from strands_durable.faults.backends import conversation

    conversation.tools()


def detect_kind(factory: BackendFactory, label: str, root: Path, prefix: str, limit_s: float) -> str:
    """Which kind the factory returns, asked in a child (the parent never holds the backend's connections)."""
    place = root / "detect"
    reset_dir(place)
    answer = place / "kind.json"

    def body() -> int:
        ctx = GateContext("gate-detect", place / "backend", prefix)
        try:
            kind, _backend = build_backend(factory, ctx, label)
        except DurableError as exc:
            write_scratch(answer, json.dumps({"error": str(exc), "exit": int(exc.exit_code)}).encode())
            return 0
        write_scratch(answer, json.dumps({"kind": kind}).encode())
        return 0

    job = Job("detect", [lambda: body])
    run_jobs([job], workers=1, limit_s=limit_s)
    if job.overran:
        raise BackendUnavailable(f"backend factory {label} did not return within {limit_s:g} s")
    if not answer.exists():
        raise BackendUnavailable(f"backend factory {label} killed the process calling it ({job.exits[0].describe()})")
    found = json.loads(answer.read_text())
    if "error" in found:
        error = BackendUnavailable if found["exit"] == int(ExitCode.IO) else BackendFactoryError
        raise error(found["error"])
    return str(found["kind"])


def _contract_results(
    factory: BackendFactory, kind: str, root: Path, prefix: str, limit_s: float, label: str
) -> list[ClauseResult]:
    meanings = contract.REPOSITORY_CLAUSES if kind == REPOSITORY else contract.STORAGE_CLAUSES
    found = contract.run_contract(factory, kind, root, prefix, limit_s)
    results = []
    for clause in meanings:
        outcome, detail = found[clause]
        if outcome == "absent":
            results.append(ClauseResult(clause, NOT_APPLICABLE, f"declared absent: {detail}"))
        elif outcome == "fail":
            results.append(ClauseResult(clause, FAIL, detail, f"strands chaos backend {label}"))
        else:
            results.append(ClauseResult(clause, PASS, meanings[clause]))
    return results


def _crash_clauses(
    setup: children.Setup,
    root: Path,
    report: BackendReport,
    points: Sequence[str] | None,
    every: int,
    workers: int,
    limit_s: float,
    clock: PhaseClock | None = None,
) -> dict[str, ClauseResult]:
    """Every crash clause judged over the golden run and every crash point."""
    clock = clock or PhaseClock()
    reproduce = f"strands chaos backend {report.backend}"
    try:
        golden = explore.run_golden(setup, root, limit_s=limit_s)
    except explore.GoldenFailed as failed:
        clause = "liveness" if "limit" in str(failed) else "valid-history"
        return _all_results({clause: [f"{failed}"]}, reproduce, not_run=str(failed))
    clock.lap("golden")
    report.repository_calls = golden.calls
    sampled = golden.points if points is not None else golden.points[:: max(1, every)]  # given points: all of them
    candidates = explore.factory_points() + sampled
    chosen = [p for p in candidates if points is None or p in points]
    report.crash_points = len(chosen)
    runs = explore.crash_everywhere(setup, root, golden, points=chosen, workers=workers, limit_s=limit_s)
    explore.read_resumes(runs)
    clock.lap("kills and resumes")
    found: dict[str, list[str]] = {}
    where: dict[str, str] = {}
    for run in runs:
        for clause, detail in clauses.judge_point(golden, run):
            found.setdefault(clause, []).append(f"kill at {run.point}, resumed by {run.style}: {detail}")
            where.setdefault(clause, run.point)
    for finding in explore.not_fired(runs):
        found.setdefault("liveness", []).append(f"kill at {finding.point}: {finding.detail}")
    explored = sum(r.resume is not None for r in runs)
    report.factory_kills = explore.factory_kills(runs)
    reached = points is None or any(p.split(":", 1)[0] in teams.TEAMS for p in points)
    if reached:  # given points: only the teams' own (`graph:<point>`, `swarm:<point>`)
        team = teams.explore_teams(setup, root, workers=workers, limit_s=limit_s, every=every, points=points)
        clock.lap("graph and swarm")
        for clause, problems in team["problems"].items():
            found.setdefault(clause, []).extend(problems)
            where.setdefault(clause, team["where"][clause])
        explored += team["explored"]
        report.crash_points += team["explored"]
    results = _all_results(found, reproduce, where=where, explored=explored)
    if not reached:
        results["nodes-not-rerun"] = ClauseResult("nodes-not-rerun", NOT_APPLICABLE, "not run: given points only")
    if every > 1:
        for result in results.values():
            result.detail += f" (a partial gate: every {every}th crash point)" if result.outcome == PASS else ""
    return results


def _attribute(
    results: dict[str, ClauseResult],
    kind: str,
    points: Sequence[str] | None,
    every: int,
    workers: int,
    limit_s: float,
) -> None:
    """A crash clause that fails as well over the correct backend of this kind fails because of the SDK's layer
    above it: said so in its detail (it still fails: a user of this backend meets it)."""
    failing = [name for name, result in results.items() if result.outcome == FAIL]
    if not failing:
        return
    key = (kind, tuple(points) if points is not None else None, every)
    if key not in _REFERENCE_FAILS:
        from strands_durable.testing import backends

        reference = getattr(backends, backends.REFERENCES[kind])
        with tempfile.TemporaryDirectory(prefix="strands-backend-reference-") as scratch:
            setup = children.Setup(reference, kind, f"sdref{os.getpid()}")
            reference_report = BackendReport("reference", kind)
            crash = _crash_clauses(setup, Path(scratch), reference_report, points, every, workers, limit_s)
        _REFERENCE_FAILS[key] = {name for name, result in crash.items() if result.outcome == FAIL}
    for name in failing:
        if name in _REFERENCE_FAILS[key]:
            result = results[name]
            layer = SDK_LAYER[kind]
            result.detail = f"the SDK's {layer} fails it over a correct {kind} too; here: {result.detail}"


def _two_resumers(setup: children.Setup, root: Path, label: str, limit_s: float) -> ClauseResult:
    problems = resumers.race(setup, root, limit_s=limit_s)
    if not problems:
        return ClauseResult("two-resumers", PASS, "one resumer got an error; nothing it sent is stored")
    detail = problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
    if setup.kind != MANAGER and _reference_races_fail(setup.kind, limit_s):
        detail = f"the SDK's {SDK_LAYER[setup.kind]} fails it over a correct {setup.kind} too; here: {detail}"
    return ClauseResult("two-resumers", FAIL, detail, f"strands chaos backend {label} --point {RACE_POINT}")


def _reference_races_fail(kind: str, limit_s: float) -> bool:
    """Whether two resumers fail over the correct backend of `kind` as well (the race is in lockstep, so the
    answer is the same every time: asked once per kind and process)."""
    if kind not in _REFERENCE_RACE_FAILS:
        from strands_durable.testing import backends

        reference = getattr(backends, backends.REFERENCES[kind])
        with tempfile.TemporaryDirectory(prefix="strands-backend-reference-") as scratch:
            setup = children.Setup(reference, kind, f"sdref{os.getpid()}")
            _REFERENCE_RACE_FAILS[kind] = bool(resumers.race(setup, Path(scratch), limit_s=limit_s))
    return _REFERENCE_RACE_FAILS[kind]


def _all_results(
    found: dict[str, list[str]],
    reproduce: str,
    *,
    where: dict[str, str] | None = None,
    explored: int = 0,
    not_run: str = "",
) -> dict[str, ClauseResult]:
    results = {}
    for clause in CRASH_CLAUSES:
        problems = found.get(clause, [])
        if problems:
            point = (where or {}).get(clause)
            command = f"{reproduce} --point '{point}'" if point else reproduce
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            results[clause] = ClauseResult(clause, FAIL, problems[0] + more, command)
        elif not_run:
            results[clause] = ClauseResult(clause, NOT_APPLICABLE, f"not judged: {not_run}")
        else:
            results[clause] = ClauseResult(clause, PASS, f"{explored} killed runs resumed")
    if not not_run and "nodes-not-rerun" not in found:
        results["nodes-not-rerun"].detail = "a Graph and a Swarm killed at every point and called again"
    return results


def _declarable(clause: str, result: ClauseResult | None, absent: frozenset[str], level: str | None) -> ClauseResult:
    """A clause the factory declared absent, or one the asked level does not need, is not applicable."""
    if clause in absent:
        return ClauseResult(clause, NOT_APPLICABLE, "declared absent by the factory (strands_chaos_absent)")
    needs = {"durable-per-message": ("message-durable", "concurrent-safe"), "two-resumers": ("concurrent-safe",)}
    if level is not None and level not in needs[clause]:
        return ClauseResult(clause, NOT_APPLICABLE, f"not run: --level {level} does not ask for it")
    if result is None:
        return ClauseResult(clause, NOT_APPLICABLE, "not run: only the given crash points were explored")
    return result
