"""The golden run: one uninterrupted run that every fault class and agent harness judges against.

`GoldenRun` is the one golden-run type. `ChaosTarget` (faults/target.py) says what workflow to run; `run_golden`
runs it once, recording every crash point with the journal's length, the snapshot digest and the tools' workspace
at that moment, so that any fault class can start a crash from the golden run's durable state just before a point
(`seed_session`) and judge a resumed run against the golden one. The Python-agent harnesses (faults/agent_chaos.py,
faults/agents.py, faults/multiagent.py) fill the same type with their points, history, effects and requests.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import Commit, CrashPoint, CrashPoints, ToolKey, natural_key
from strands_durable.errors import BudgetExceeded, DurableError, WorkflowFailed
from strands_durable.faults.common import INVALID_HISTORY, Finding
from strands_durable.faults.judge import continuable, tool_repeats
from strands_durable.faults.observe import Phase, observe, observed_store, run_options
from strands_durable.faults.oracle import comparable
from strands_durable.faults.snapshot import SnapshotDigest, snapshot_view
from strands_durable.faults.target import ChaosTarget
from strands_durable.faults.workspace import WorkspaceHistory, read_files, write_files
from strands_durable.store import LocalStore
from strands_durable.store.fileops import FileOps
from strands_durable.store.state import SessionState, copy_state, fold
from strands_durable.store.wrapping import WrappingStore

_GOLDEN_STATES_KEPT = 32

PINNED_CREATED_AT = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
"""Every chaos run of a workflow is created at this instant, so clocks, templates and tool results repeat."""

_OPS = FileOps()  # chaos scratch files go through the project's one file-operations layer too


@dataclass(frozen=True)
class GoldenPoint:
    """A crash point of the golden run, where it happened, and the durable state at that moment."""

    point: CrashPoint
    index: int  # position in the golden run
    journal_length: int = 0  # journal bytes durable when the point was reached (a workflow's golden run)
    digest: str | None = None  # snapshot digest, at store.after_commit points
    completed: bool = False  # the session's status was already completed
    outcome_unknown: bool = False  # a non-idempotent tool had started and had no committed result

    @property
    def id(self) -> str:
        return self.point.id


def golden_points(points: Iterable[CrashPoint]) -> list[GoldenPoint]:
    """The points an agent harness's golden run passed, in order (no journal of ours to measure)."""
    return [GoldenPoint(point, index) for index, point in enumerate(points)]


def dump_points(points: Iterable[CrashPoint]) -> bytes:
    """The points a child process passed, in order, for its parent's golden run (`load_points`)."""
    return json.dumps([[p.site, p.path, p.occurrence] for p in points]).encode()


def load_points(data: str) -> list[GoldenPoint]:
    """The golden points of what `dump_points` wrote (each point's id as the child passed it)."""
    return golden_points(CrashPoint(site, path, occurrence) for site, path, occurrence in json.loads(data))


@dataclass
class GoldenRun:
    """The uninterrupted run: what ran (`target`: a workflow's ChaosTarget, an agent's AgentChaos, a harness's
    manager or scenario name), the crash points it passed, what a resumed run must equal (`comparable`: a
    workflow's comparable view, an agent's normalised history, a multi-agent run's summary), the problems it
    showed, its model requests and the tools' workspace and effects. A workflow's golden run also holds its
    journal and the durable state at each point."""

    target: Any
    workdir: Path
    points: list[GoldenPoint]
    comparable: Any
    problems: list[Finding] = field(default_factory=list)
    model_requests: int = 0
    node_requests: Counter[str] = field(default_factory=Counter)  # model requests per node (a multi-agent run)
    effects: Counter[str] = field(default_factory=Counter)  # tool executions by what they did (a harness's ledger)
    concurrent: bool = False  # tool executions overlapped in time (the tools really ran in parallel)
    tool_executions: int = 0
    journal: bytes = b""
    spec_snapshot: bytes = b""
    meta: dict[str, Any] = field(default_factory=dict)
    checkpoint_states: dict[str, GoldenPoint] = field(default_factory=dict)  # snapshot digest -> first checkpoint
    digester: SnapshotDigest = field(default_factory=SnapshotDigest)  # shared by the explorations of this run
    valid_histories: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # last stored-valid, per key
    _by_id: dict[str, GoldenPoint] = field(default_factory=dict)
    commits: list[tuple[int, tuple[ToolKey, ...]]] = field(default_factory=list)  # (journal length, results)
    _states: OrderedDict[int, SessionState] = field(default_factory=OrderedDict)  # journal length -> state
    workspace: WorkspaceHistory = field(default_factory=lambda: WorkspaceHistory({}))  # the tools' files
    failure: str | None = None  # the deterministic failure the golden run ended with (`failure_of`); None: completed
    untaken_edges: list[str] = field(default_factory=list)  # graph edges (`a -> b`) the golden run never took

    def __post_init__(self) -> None:
        self._by_id = {p.id: p for p in self.points}
        for p in self.points:
            if p.digest is not None:
                self.checkpoint_states.setdefault(p.digest, p)
        self.commits = [
            (p.journal_length, p.point.tool_results)
            for p in self.points
            if isinstance(p.point, Commit) and p.point.site == "store.after_commit"
        ]

    def point(self, point_id: str) -> GoldenPoint:
        return self._by_id[point_id]

    def emissions_before(self, site: str, path: str, index: int) -> int:
        """How many times the golden run emitted `site` at `path` before its point `index`."""
        return sum(1 for p in self.points[:index] if p.point.site == site and p.point.path == path)

    @property
    def point_ids(self) -> list[str]:
        """Every point's id, in the order the golden run passed them."""
        return [p.id for p in self.points]

    def seed_workspace(self, directory: Path, index: int = 0) -> Path:
        """Create `directory` as a run's own copy of the tools' workspace as the golden run left it just before
        its point `index` (0: the external state every run starts from)."""
        if directory.exists():
            _OPS.remove_tree(directory)
        write_files(directory, self.workspace.at(index))
        return directory

    def require_completed(self) -> GoldenRun:
        """This run, when it completed; the classes that compare a resume's completed result need one."""
        if self.failure is not None or self.comparable.get("status") != "completed":
            raise DurableError(
                f"{self.target.spec_path}: the golden run ended {self.failure or 'failed'}, not completed"
            )
        return self

    @property
    def site_kinds(self) -> set[str]:
        return {p.point.site for p in self.points}

    def ordered_ids(self) -> list[str]:
        """Point ids in an order that is the same in every process (concurrent units interleave differently)."""
        return sorted(self._by_id, key=natural_key)

    def sample(self, limit: int | None) -> list[str]:
        """The points to explore: all, or `limit` spread evenly over them, in the order of `ordered_ids`."""
        ordered = self.ordered_ids()
        count = len(ordered)
        if limit is None or limit >= count:
            return ordered
        if limit <= 1:
            return ordered[:limit]
        return [ordered[i] for i in sorted({round(i * (count - 1) / (limit - 1)) for i in range(limit)})]

    def snapshot_at(self, checkpoint: GoldenPoint) -> dict[str, Any]:
        return snapshot_view(self.state_at(checkpoint.journal_length))

    def state_at(self, length: int) -> SessionState:
        """The durable state after the first `length` bytes of the golden journal (a copy the caller may fold
        more records into). Folded from the nearest shorter state already made, so exploring the points in
        order folds each record about once instead of the whole prefix per point."""
        state = self._states.get(length)
        if state is None:
            base = max((known for known in self._states if known <= length), default=0)
            if base:
                state = copy_state(self._states[base])
                tail = LocalStore.read_journal_bytes(self.journal[base:length], first_seq=state.seq + 1)
                fold(tail.records, state)
            else:
                state = _fold_bytes(self.journal[:length])
            self._states[length] = state
            while len(self._states) > _GOLDEN_STATES_KEPT:
                self._states.popitem(last=False)
        self._states.move_to_end(length)
        return copy_state(state)


# -- where a crash run starts -------------------------------------------------------------------------------------


def cut_for(golden: GoldenRun, target: GoldenPoint) -> GoldenPoint | None:
    """The last store.before_commit point strictly before `target` whose durable state lets the run reach the
    target as the golden run did: the crashing run starts just before that commit, so it makes the commit itself
    and every point attached to it (tool.committed, unit.after) is reached. A state where a non-idempotent tool
    has started without a result is never a start (its resume answers "outcome unknown" instead of running the
    tool, so it could not leave what a real crash at the target leaves): the cut moves back before the tool's
    `started` commit. Points after the run completed (closing the session) are reached from before the
    completing commit."""
    for point in reversed(golden.points[: target.index]):
        if point.point.site == "store.before_commit" and not point.completed and not point.outcome_unknown:
            return point
    return None


def skip_count(golden: GoldenRun, target: GoldenPoint, start_index: int) -> int:
    """Which emission of the target's site and path to crash at, in a run that starts at `start_index`."""
    return max(0, target.point.occurrence - golden.emissions_before(target.point.site, target.point.path, start_index))


def seed_session(golden: GoldenRun, sessions: Path, out_dir: Path, journal_tail: bytes) -> tuple[bytes, dict[str, Any]]:
    """A session directory holding the golden header (with this run's output directory) and `journal_tail`;
    returns the journal's bytes and the session's metadata."""
    _OPS.makedirs(out_dir, durable=False)
    header_end = golden.journal.index(b"\n") + 1
    header = LocalStore.read_journal_bytes(golden.journal[:header_end]).records[0]
    meta = dict(header["events"][0]["meta"])
    meta["runtime"] = {**meta["runtime"], "out_dir": str(out_dir.resolve())}
    header["events"] = [{**header["events"][0], "meta": meta}, *header["events"][1:]]
    journal = LocalStore(sessions).seed(
        golden.target.session_id, header=header, tail=journal_tail, spec_snapshot=golden.spec_snapshot
    )
    return journal, meta


def _fold_bytes(journal: bytes) -> SessionState:
    return fold(LocalStore.read_journal_bytes(journal).records)


# -- the golden run ---------------------------------------------------------------------------------------------


def run_golden(
    target: ChaosTarget,
    workdir: Path,
    *,
    store_factory: Callable[[Path], WrappingStore] = observed_store,
    subscribe: Callable[[CrashPoints], None] | None = None,
) -> GoldenRun:
    """Run the workflow once without faults, recording every crash point and the durable state at each, in
    `workdir/golden` (sessions/, out/, workspace/). `store_factory` opens the store on the sessions root (the
    power class records every file operation through its own) and `subscribe` adds observers to the bus."""
    from strands_durable.runner.run import run_workflow

    if workdir.exists():
        _OPS.remove_tree(workdir)
    sessions, out_dir = workdir / "golden" / "sessions", workdir / "golden" / "out"
    scratch = workdir / "golden" / "workspace"
    workspace = WorkspaceHistory(read_files(target.workspace))
    write_files(scratch, workspace.final)
    store = store_factory(sessions)
    journal_path = LocalStore(sessions).journal_path(target.session_id)
    phase = Phase()
    bus = CrashPoints()
    points: list[GoldenPoint] = []
    digester = SnapshotDigest()

    def record(point: CrashPoint) -> None:
        digest = None
        if point.site == "store.after_commit" and store.session is not None:
            digest = digester.digest(store.session.state)
        state = store.session.state if store.session is not None else None
        completed = state is not None and state.status == "completed"
        unknown = point.site == "store.before_commit" and state is not None and bool(pending_unknown(state))
        if point.site == "tool.executed":  # tools change the workspace only while they run
            workspace.observe(len(points), scratch)
        points.append(GoldenPoint(point, len(points), journal_path.stat().st_size, digest, completed, unknown))

    bus.subscribe(record)
    observe(bus, phase)
    if subscribe is not None:
        subscribe(bus)
    options = run_options(target, out_dir, bus, scratch_dir=scratch, requests=phase.requests, lockstep=True)
    failure = None
    try:
        status = run_workflow(target.spec_path, options, store=store, session_id=target.session_id).status
    except DETERMINISTIC_FAILURES as exc:  # explored too: every crash point must resume to this same failure
        from strands_durable.faults.cassette import CassetteMiss

        if isinstance(exc, CassetteMiss):  # the recording is incomplete: that is the finding, not a workflow's end
            raise
        failure, status = failure_of(exc), "failed"
    final = LocalStore(sessions).load(target.session_id)
    problems = [Finding(INVALID_HISTORY, f"golden run: {v}") for v in continuable(final)]
    if (status != "completed" and failure is None) or final.status != status:
        problems.append(Finding("status", f"golden run ended {final.status}"))
    problems += tool_repeats(phase.tools_run, "golden run")
    return GoldenRun(
        target=target,
        workdir=workdir,
        points=points,
        journal=LocalStore(sessions).journal_bytes(target.session_id),
        spec_snapshot=LocalStore(sessions).spec_snapshot_bytes(target.session_id),
        meta=final.meta,
        comparable=comparable(final),
        tool_executions=len(phase.tools_run),
        model_requests=len(phase.requests.requests),
        problems=problems,
        digester=digester,
        workspace=workspace,
        failure=failure,
        untaken_edges=_untaken_edges(target.spec_path, final),
    )


def _untaken_edges(spec_path: Path, state: SessionState) -> list[str]:
    """The graph edges a run never took (none for other patterns): its crash points cannot cover them."""
    from strands_durable.runner.patterns.graph import untaken_edges
    from strands_durable.spec import load_spec

    spec = load_spec(spec_path)
    if spec.pattern.type != "graph":
        return []
    return untaken_edges(spec.pattern.config, list(state.units.values()))


DETERMINISTIC_FAILURES = (WorkflowFailed, BudgetExceeded)
"""Failures a golden run may end with and still be explored (a graph past `max_iterations`, a budget exceeded):
the same inputs fail the same way, so every crash point must resume to the same failure."""


def failure_of(exc: BaseException) -> str:
    """How a failure is compared between the golden run and a resume: its type and message."""
    return f"{type(exc).__name__}: {exc}"


def pending_unknown(state: SessionState) -> set[str]:
    """toolUseIds of non-idempotent tools that started but whose results are not committed: a resume from this
    state answers them "outcome unknown" (a results message clears both records, so no message is read)."""
    pending: set[str] = set()
    for conv in state.conversations.values():
        if conv.tools_started:
            pending |= conv.tools_started - conv.tool_results.keys()
    return pending
