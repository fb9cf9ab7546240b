"""What every real-fault explorer shares: the target, the golden run, the final judgement and the findings.

An explorer (kill, power, disk, concurrent, stream, compound) runs a workflow, breaks it in its own way, lets a
fresh run resume it, and judges the result against the golden (uninterrupted) run with the CONTRACT's
"identical" (`faults.oracle.comparable`). Every problem is a `Finding` with a stable id, so a failing one can be
named and rerun. Tool executions are counted in an fsynced ledger outside the session, so "nothing runs twice"
holds across processes.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoint, CrashPoints, ToolCall
from strands_durable.errors import DurableError
from strands_durable.faults.oracle import comparable, first_difference, stored_violations
from strands_durable.runner.options import RunOptions
from strands_durable.store import LocalStore
from strands_durable.store.fileops import FileOps
from strands_durable.store.state import SessionState

PINNED_CREATED_AT = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
"""Every fault run of a workflow is created at this instant, so clocks, templates and tool results repeat."""

_SCRATCH = FileOps()  # workspace files of the harness (not session data): written without fsync


@dataclass
class FaultTarget:
    """What to break: a spec, its variables, the synthetic model's seed and how HITL steps are answered."""

    spec_path: Path
    variables: dict[str, str] = field(default_factory=dict)
    seed: int = 0
    model_factory: Callable[..., Any] | None = None  # (agent_id, provider, model_id, runtime) -> Model

    def __post_init__(self) -> None:
        self.spec_path = Path(self.spec_path).resolve()

    @property
    def session_id(self) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"strands-faults:{self.spec_path}:{self.seed}"))

    @property
    def name(self) -> str:
        return self.spec_path.name.split(".strands.")[0]


INVALID_HISTORY = "invalid-history"


@dataclass(frozen=True)
class Finding:
    """One violated rule with a readable detail (a first difference, an id, a message); the real-fault classes
    also say where: which class, at which place (a stable point id), in which variant. The one finding type of
    every fault class, the in-process explorer included."""

    rule: str  # identical | data-lost | tool-rerun | invalid-history | unclean-failure | ...
    detail: str
    fault: str = ""  # kill | power | disk | concurrent | stream | compound ("": an in-process crash point)
    point: str = ""  # stable id of the place the fault was injected
    variant: str = ""  # the signal, the errno, the crash-state kind, ...

    @property
    def id(self) -> str:
        return f"{self.fault}:{self.point}:{self.variant}"

    @property
    def invalid_history(self) -> bool:
        return self.rule == INVALID_HISTORY

    def __str__(self) -> str:
        where = f"{self.id} " if self.fault else ""
        return f"{where}[{self.rule}] {self.detail}"


@dataclass(frozen=True)
class FaultClass:
    """One real-fault class: its name, its bounds per level (`gate`: what CI runs, `full`: every point it knows;
    keyword arguments of `explore`) and its explorer `explore(target, workdir, *, golden=..., **bounds)`.
    A class module declares `FAULT_CLASS`; `faults/real.py` lists the module in one line."""

    name: str
    bounds: Mapping[str, Mapping[str, Any]]
    explore: Callable[..., FaultRun]
    records_own_golden: bool = False  # it runs the golden run itself (power records it through its file layer)
    seeded: bool = False  # its explorer takes the soak's `seed`


@dataclass
class FaultRun:
    """What one explorer did over one workflow: points explored, distinct crash states, outcomes, findings."""

    fault: str
    workflow: str
    explored: int = 0
    states: set[str] = field(default_factory=set)  # digests of distinct crash states (power, disk, kill)
    outcomes: Counter[str] = field(default_factory=Counter)  # "resumed", "clean-failure: 17", ...
    findings: list[Finding] = field(default_factory=list)

    def add(self, point: str, variant: str, rule: str, detail: str) -> None:
        self.findings.append(Finding(rule, detail, self.fault, point, variant))

    def judge(self, golden: Golden, sessions: Path, point: str, variant: str) -> None:
        """Add a finding for each way the session in `sessions` falls short of the golden run (`judge_final`)."""
        for rule, detail in judge_final(golden, sessions):
            self.add(point, variant, rule, detail)

    @property
    def unique_states(self) -> int:
        return len(self.states)

    def count(self, rule: str) -> int:
        return sum(1 for f in self.findings if f.rule == rule)

    def summary(self) -> dict[str, Any]:
        return {
            "fault": self.fault,
            "workflow": self.workflow,
            "crash_points": self.explored,
            "unique_states": self.unique_states,
            "outcomes": dict(sorted(self.outcomes.items())),
            "divergences": len(self.findings) - self.count("invalid-history") - self.count("data-lost"),
            "invalid_histories": self.count("invalid-history"),
            "data_lost": self.count("data-lost"),
            "findings": [{"id": f.id, "rule": f.rule, "detail": f.detail} for f in self.findings],
        }


@dataclass
class Golden:
    """The uninterrupted run: its comparable view and the crash points it passed, in order.

    `run_golden` also keeps the journal's bytes, the spec snapshot and the journal's length when each point was
    reached (`journal_lengths[i]` for `points[i]`), so a crash can start from the golden run's journal prefix."""

    target: FaultTarget
    comparable: dict[str, Any]
    point_ids: list[str]
    points: list[CrashPoint]
    journal: bytes = b""
    spec_snapshot: bytes = b""
    journal_lengths: list[int] = field(default_factory=list)


def run_options(
    target: FaultTarget,
    out_dir: Path,
    crash_points: CrashPoints | None = None,
    *,
    stop_requested: Callable[[], bool] | None = None,
    model_factory: Callable[..., Any] | None = None,
) -> RunOptions:
    """Options of a fault run: the synthetic model (offline semantics), HITL defaults, a pinned creation time."""
    extra: dict[str, Any] = {}
    if stop_requested is not None:
        extra["stop_requested"] = stop_requested
    return RunOptions(
        provider="synthetic",
        seed=target.seed,
        cli_vars=[f"{k}={v}" for k, v in target.variables.items()],
        out_dir=out_dir,
        hitl_use_defaults=True,
        model_factory=model_factory or target.model_factory,
        crash_points=crash_points,
        created_at=PINNED_CREATED_AT,
        **extra,
    )


def run_golden(target: FaultTarget, workdir: Path) -> Golden:
    """Run the workflow once without faults; record its crash points, the journal's length at each, the journal
    and the final comparable view."""
    from strands_durable.runner.run import run_workflow

    reset_dir(workdir)
    bus = CrashPoints()
    points: list[CrashPoint] = []
    lengths: list[int] = []
    store = LocalStore(workdir / "sessions")
    journal_path = store.journal_path(target.session_id)

    def record(point: CrashPoint) -> None:
        points.append(point)
        try:
            lengths.append(journal_path.stat().st_size)
        except FileNotFoundError:
            lengths.append(0)

    bus.subscribe(record)
    outcome = run_workflow(
        target.spec_path, run_options(target, workdir / "out", bus), store=store, session_id=target.session_id
    )
    if outcome.status != "completed":
        raise DurableError(f"{target.spec_path}: the golden run ended {outcome.status}, not completed")
    state = store.load(target.session_id)
    return Golden(
        target,
        comparable(state),
        [p.id for p in points],
        points,
        journal=store.journal_bytes(target.session_id),
        spec_snapshot=store.spec_snapshot_bytes(target.session_id),
        journal_lengths=lengths,
    )


def judge_final(golden: Golden, sessions: Path, *, require_identical: bool = True) -> list[tuple[str, str]]:
    """(rule, detail) problems of a session that should now be completed and identical to the golden run."""
    try:
        state = LocalStore(sessions).load(golden.target.session_id)
    except DurableError as exc:
        return [("resume-failed", f"the session cannot be loaded after the resume: {exc}")]
    return judge_state(golden, state, require_identical=require_identical)


def judge_state(golden: Golden, state: SessionState, *, require_identical: bool = True) -> list[tuple[str, str]]:
    problems = [("invalid-history", v) for v in stored_violations(state, mode="stored")]
    if state.status != "completed":
        problems.append(("status", f"the session ended {state.status} ({state.reason}), not completed"))
        return problems
    if require_identical and not synthesized_results(state):
        difference = first_difference(golden.comparable, comparable(state))
        if difference:
            problems.append(("identical", f"differs from the golden run at {difference}"))
    return problems


def synthesized_results(state: SessionState) -> list[str]:
    """toolUseIds answered with the synthesized "outcome unknown" error (a non-idempotent tool died mid-call):
    such a run legitimately differs from the golden run, so only its validity and completion are judged."""
    from strands_durable.agent.durable import SYNTHESIZED_MARKER

    found: list[str] = []
    for conv in state.conversations.values():
        for message in conv.messages:
            found += (message.get("metadata") or {}).get("strands_durable", {}).get(SYNTHESIZED_MARKER, [])
    return found


def reset_dir(path: Path) -> None:
    """Remove `path` (through the file-operations layer) and create it empty."""
    if path.exists():
        _SCRATCH.remove_tree(path)
    _SCRATCH.makedirs(path, durable=False)


def write_scratch(path: Path, data: bytes) -> None:
    """A harness file (markers, reports), written through the file-operations layer without fsync."""
    _SCRATCH.makedirs(path.parent, durable=False)
    _SCRATCH.write_file(path, data, sync=False)


class ToolLedger:
    """Tool executions of every process of one exploration, one fsynced line each: (event, tool path, pid).

    `tool.before` means a tool is about to run, `tool.committed` that its result is durable. Nothing committed
    may run again, and a non-idempotent tool (one with a `/started` commit) may run at most once. Lines are
    fsynced when `durable` (processes racing on one machine); a killed process's writes reach the file anyway
    (the kernel still holds them), so the kill explorer skips the fsync.
    """

    def __init__(self, path: Path, *, durable: bool = True) -> None:
        self.path = path
        self.durable = durable
        self._ops = FileOps()

    def subscribe(self, bus: CrashPoints) -> None:
        bus.subscribe(self._record)

    def _record(self, point: CrashPoint) -> None:
        self.record_points([point])

    def record_points(self, points: Iterable[CrashPoint]) -> None:
        """Append the tool points among `points` (also those of a run whose journal prefix an exploration
        starts from: what that prefix committed must not run again either)."""
        lines = [json.dumps([p.site, p.path]) + "\n" for p in points if p.site in ("tool.before", "tool.committed")]
        if not lines:
            return
        handle = self._ops.open_append(self.path)
        try:
            handle.append("".join(lines).encode())
            if self.durable:
                handle.sync()
        finally:
            handle.close()

    def entries(self) -> list[tuple[str, str]]:
        if not self.path.exists():
            return []
        rows = []
        for line in self.path.read_bytes().splitlines():
            try:
                site, path = json.loads(line)
            except ValueError:
                continue  # a line torn by a kill
            rows.append((site, path))
        return rows

    def reruns(self, non_idempotent: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
        """Tool paths that ran after their result was committed, or non-idempotent ones that ran twice."""
        committed: set[str] = set()
        runs: Counter[str] = Counter()
        problems = []
        for site, path in self.entries():
            if site == "tool.committed":
                committed.add(path)
                continue
            runs[path] += 1
            if path in committed:
                problems.append(f"tool call {path} ran again after its result was committed")
            elif path in non_idempotent and runs[path] > 1:
                problems.append(f"non-idempotent tool call {path} ran {runs[path]} times")
        return problems


def non_idempotent_tools(golden: Golden) -> set[str]:
    """Tool paths of the golden run's non-idempotent tool calls."""
    return {p.path for p in golden.points if isinstance(p, ToolCall) and p.non_idempotent}
