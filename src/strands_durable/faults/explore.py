"""In-process crash exploration: one golden run, then an interrupt at each of its crash points, resumed in fresh
objects and judged against the golden run (CONTRACT "identical"). The pytest plugin and user tests drive it.

How one crash point is explored (`explore_point`):

1. The run that crashes starts from the golden run's durable state just before the last commit that precedes the
   point (its journal prefix, copied into a fresh session directory; readable files are re-derived, as after any
   crash) and resumes from there with an `InjectedCrash` armed at the point. So the crash happens in a real run,
   and the cost of a point does not grow with the workflow's length. A point that never fires is a failure.
2. Right after the crash the stored histories must be valid (`mode="stored"`).
3. A resume in fresh objects (a new `LocalStore` on the directory, as a new process would) runs until it reaches
   a checkpoint (a commit) whose normalised snapshot equals the golden run's at one of its checkpoints (the
   convergence shortcut), or to the end with `full=True` or when it never converges, where the whole comparable
   view, request validity of every history and the completed status are checked. Committed tools must not run
   again, committed model turns must not be requested again, and the durable state must match, not just the
   memory. Any golden checkpoint will do, not only the one at the same commit: a resume from that durable state
   is what the crash point right after that golden commit explores, so stopping there loses nothing, and runs
   whose concurrent units interleave differently from the golden run meet it long before the end.
4. When the resume passed the same point again, a second run crashes there too, and a third must converge.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import gc
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import (
    SITES,
    Commit,
    CrashPoint,
    CrashPoints,
    InjectedCrash,
    ToolCall,
    ToolKey,
    natural_key,
)
from strands_durable.errors import BudgetExceeded, DurableError, WorkflowFailed
from strands_durable.faults.common import INVALID_HISTORY, Finding
from strands_durable.faults.oracle import RequestLog, comparable, counting_model, history_violations
from strands_durable.faults.report import readable_difference
from strands_durable.faults.snapshot import SnapshotDigest, snapshot_view
from strands_durable.faults.workspace import (
    WORKSPACE_RULE,
    WorkspaceHistory,
    read_files,
    workspace_difference,
    write_files,
)
from strands_durable.history import SYNTHESIZED_RESULT_TEXT, normalize, validate
from strands_durable.runner.options import RunOptions
from strands_durable.store import KnownJournal, LocalStore
from strands_durable.store.fileops import FileOps
from strands_durable.store.state import SessionState, copy_state, fold
from strands_durable.store.wrapping import WrappingStore

_GOLDEN_STATES_KEPT = 32

PINNED_CREATED_AT = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
"""Every chaos run of a workflow is created at this instant, so clocks, templates and tool results repeat."""

_OPS = FileOps()  # chaos scratch files go through the project's one file-operations layer too

"""The rule name of problems about histories a provider would reject; every other rule is a divergence."""


class Converged(InjectedCrash):
    """Stops a resumed run at a checkpoint equal to the golden run's; the session is let go as after a crash."""


@dataclass
class ChaosTarget:
    """What to explore: a spec, its variables and Python tools, and how the model answers."""

    spec_path: Path
    variables: dict[str, str] = field(default_factory=dict)
    tools: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    hitl_answer: str | None = None
    model: Callable[..., Any] | None = None  # (agent_id, model_id, runtime) -> strands Model; None: synthetic
    full: bool = False  # run every resumed tail to the end instead of stopping at convergence
    network_tools: Any = None  # `NetworkCassette` answering the network tools (faults/cassette.py); None: none
    workspace: Path | None = None  # the tools' external state each run starts from (copied; None: empty)

    @property
    def session_id(self) -> str:
        return _session_id_for(self.spec_path, self.seed)


@functools.lru_cache(maxsize=256)
def _session_id_for(spec_path: Path, seed: int) -> str:
    """One fixed session id per spec file and seed (resolving the path costs system calls; asked per run)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"strands-chaos:{spec_path.resolve()}:{seed}"))


@dataclass(frozen=True)
class GoldenPoint:
    """A crash point of the golden run, where it happened, and the durable state at that moment."""

    point: CrashPoint
    index: int  # position in the golden run
    journal_length: int  # journal bytes durable when the point was reached
    digest: str | None  # snapshot digest, at store.after_commit points
    completed: bool = False  # the session's status was already completed
    outcome_unknown: bool = False  # a non-idempotent tool had started and had no committed result

    @property
    def id(self) -> str:
        return self.point.id


@dataclass
class GoldenRun:
    target: ChaosTarget
    workdir: Path
    points: list[GoldenPoint]
    journal: bytes
    spec_snapshot: bytes
    meta: dict[str, Any]
    comparable: dict[str, Any]
    tool_executions: int
    model_requests: int
    problems: list[Finding]
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

    @property
    def site_kinds(self) -> set[str]:
        return {p.point.site for p in self.points}

    def ordered_ids(self) -> list[str]:
        """Point ids in an order that is the same in every process (concurrent units interleave differently)."""
        return sorted(self._by_id, key=natural_key)

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


@dataclass
class PointOutcome:
    """The result of exploring one crash point (or one schedule of several)."""

    point_ids: list[str]
    fired: list[str] = field(default_factory=list)  # the points where a fault was actually injected
    problems: list[Finding] = field(default_factory=list)
    converged_at: str | None = None  # the checkpoint where the last resume stopped (None: ran to the end)
    runs: int = 0

    @property
    def explored(self) -> bool:
        return bool(self.fired) and self.fired[0] == self.point_ids[0]

    @property
    def ok(self) -> bool:
        return self.explored and not self.problems

    def describe(self) -> str:
        lines = [f"crash point: {' -> '.join(self.point_ids)}"]
        if not self.explored:
            lines.append("[not-fired] the fault was never injected: the resumed run did not reach this point")
        lines += [str(p) for p in self.problems]
        return "\n".join(lines)


# -- running one phase ------------------------------------------------------------------------------------------


def observed_store(sessions: Path, *, known_journal: KnownJournal | None = None) -> WrappingStore:
    """A real `LocalStore` behind the wrapper store, whose `session` is the session it opened last, so subscribers
    can read its state."""
    return WrappingStore(LocalStore(sessions, known_journal=known_journal))


class _SizedRequestLog(RequestLog):
    """Requests as (message count, digest of the normalised messages)."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[int, list[dict[str, Any]]]] = []

    def record(self, messages: list[dict[str, Any]]) -> None:
        super().record(messages)
        self.requests.append((len(messages), [dict(m) for m in messages]))


@dataclass
class _Phase:
    """What one run (golden, crashing or resuming) observed through the crash-point bus."""

    emitted: list[CrashPoint] = field(default_factory=list)
    tools_run: list[ToolCall] = field(default_factory=list)  # tool calls that executed (tool.before)
    commits: list[tuple[ToolKey, ...]] = field(default_factory=list)  # tool results each commit recorded
    requests: _SizedRequestLog = field(default_factory=_SizedRequestLog)
    fired: CrashPoint | None = None
    converged_at: CrashPoint | None = None
    converged_seq: int = -1  # the journal record of the converged checkpoint
    converged_digest: str = ""  # the golden checkpoint state it equals
    error: BaseException | None = None
    completed: bool = False


def _options(
    target: ChaosTarget,
    bus: CrashPoints,
    requests: RequestLog,
    out_dir: Path,
    scratch_dir: Path,
    *,
    off_the_record: bool = False,
) -> RunOptions:
    """`off_the_record`: the run follows a crash that made a non-idempotent call's outcome unknown, so a cassette's
    misses are answered by the synthetic model (`faults.cassette.off_the_record`)."""

    def model_factory(*, agent_id: str, provider: str, model_id: Any, runtime: Any) -> Any:
        from strands_durable.models.providers import build_model

        synthetic = None
        if target.model is None or off_the_record:
            synthetic = build_model("synthetic", model_id=model_id, runtime=runtime, seed=target.seed)
        if target.model is not None:
            model = target.model(agent_id=agent_id, model_id=model_id, runtime=runtime)
            if off_the_record:
                from strands_durable.faults.cassette import off_the_record as leave_the_record

                model = leave_the_record(model, synthetic)
        else:
            model = synthetic
        return counting_model(model, requests)

    return RunOptions(
        provider="synthetic",  # offline semantics (fixed clock, scratch directory); the model comes from the factory
        seed=target.seed,
        cli_vars=[f"{k}={v}" for k, v in target.variables.items()],
        out_dir=out_dir,
        scratch_dir=scratch_dir,  # this run's own copy of the tools' workspace
        hitl_use_defaults=True,
        hitl_answer=target.hitl_answer,
        extra_tools=dict(target.tools),
        model_factory=model_factory,
        network=target.network_tools is not None,  # the cassette answers (or records) every network tool
        network_tools=target.network_tools,
        crash_points=bus,
        created_at=PINNED_CREATED_AT,
        lockstep=True,
        cancel_in_flight=False,  # nothing stops an explored run from outside: it stops at its crash point
    )


def _observe(bus: CrashPoints, phase: _Phase) -> None:
    def record(point: CrashPoint) -> None:
        phase.emitted.append(point)
        if isinstance(point, ToolCall) and point.site == "tool.before":
            phase.tools_run.append(point)
        elif isinstance(point, Commit) and point.site == "store.after_commit":
            phase.commits.append(point.tool_results)

    bus.subscribe(record)


def _arm(bus: CrashPoints, phase: _Phase, target: CrashPoint, skip: int) -> None:
    """Raise `InjectedCrash` at the `skip`-th emission (0-based) of the target's site and path in this run."""
    seen = [0]

    def crash(point: CrashPoint) -> None:
        if phase.fired is None and point.site == target.site and point.path == target.path:
            if seen[0] >= skip:
                phase.fired = point
                raise InjectedCrash(point)
            seen[0] += 1

    bus.subscribe(crash)


def _watch_convergence(bus: CrashPoints, phase: _Phase, store: WrappingStore, golden: GoldenRun) -> None:
    digester = golden.digester

    def check(point: CrashPoint) -> None:
        if point.site != "store.after_commit" or store.session is None or phase.fired is not None:
            return
        digest = digester.digest(store.session.state)
        if digest in golden.checkpoint_states:
            phase.converged_at = point
            phase.converged_seq = store.session.state.seq
            phase.converged_digest = digest
            raise Converged(point)

    bus.subscribe(check)


# -- workspaces ---------------------------------------------------------------------------------------------------


class _Workspace:
    """Fresh directories for the runs of one exploration (each a sessions root, an output directory and the
    tools' workspace)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0

    def new(self) -> tuple[Path, Path, Path]:
        self.count += 1
        base = self.root / f"run{self.count}"
        if base.exists():
            _OPS.remove_tree(base)
        return base / "sessions", base / "out", base / "workspace"


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


def run_golden(target: ChaosTarget, workdir: Path) -> GoldenRun:
    """Run the workflow once without faults, recording every crash point and the durable state at each."""
    from strands_durable.runner.run import run_workflow

    if workdir.exists():
        _OPS.remove_tree(workdir)
    sessions, out_dir = workdir / "golden" / "sessions", workdir / "golden" / "out"
    scratch = workdir / "golden" / "workspace"
    workspace = WorkspaceHistory(read_files(target.workspace))
    write_files(scratch, workspace.final)
    store = observed_store(sessions)
    journal_path = LocalStore(sessions).journal_path(target.session_id)
    phase = _Phase()
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
    _observe(bus, phase)
    options = _options(target, bus, phase.requests, out_dir, scratch)
    failure = None
    try:
        status = run_workflow(target.spec_path, options, store=store, session_id=target.session_id).status
    except DETERMINISTIC_FAILURES as exc:  # explored too: every crash point must resume to this same failure
        from strands_durable.faults.cassette import CassetteMiss

        if isinstance(exc, CassetteMiss):  # the recording is incomplete: that is the finding, not a workflow's end
            raise
        failure, status = failure_of(exc), "failed"
    final = LocalStore(sessions).load(target.session_id)
    problems = [Finding(INVALID_HISTORY, f"golden run: {v}") for v in final_violations(final)]
    if (status != "completed" and failure is None) or final.status != status:
        problems.append(Finding("status", f"golden run ended {final.status}"))
    problems += _tool_repeats(phase.tools_run, "golden run")
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


def final_violations(state: SessionState) -> list[str]:
    """What is wrong with the histories of a run that ended: a completed run must be continuable with a new
    prompt; a failed one may have stopped inside a unit, and is held to what may be stored."""
    if state.status == "completed":
        return next_request_violations(state)
    return [v for key, conv in sorted(state.conversations.items()) for v in history_violations(key, conv.messages)]


def next_request_violations(state: SessionState) -> list[str]:
    """What a provider would reject if each finished conversation were continued with a new prompt (nothing
    may dangle: every toolUse answered, no empty or misplaced block)."""
    follow_up = {"role": "user", "content": [{"text": "continue"}]}
    problems = []
    for key, conv in sorted(state.conversations.items()):
        for v in validate([*conv.messages, follow_up], mode="request"):
            problems.append(f"{key}: {v.rule} at message {v.message_index}: {v.message}")
    return problems


def _tool_repeats(tools_run: list[ToolCall], where: str) -> list[Finding]:
    seen: set[str] = set()
    problems = []
    for call in tools_run:
        if call.path in seen:
            problems.append(Finding("tool-rerun", f"{where}: tool call {call.path} executed twice"))
        seen.add(call.path)
    return problems


# -- exploring ----------------------------------------------------------------------------------------------------


class _Exploration:
    """The state of one exploration: the phases run so far and what they committed."""

    def __init__(self, golden: GoldenRun, workdir: Path, outcome: PointOutcome) -> None:
        self.golden = golden
        self.workspace = _Workspace(workdir)
        self.outcome = outcome
        self.sessions: Path | None = None
        self.out_dir: Path | None = None
        self.scratch: Path | None = None  # the tools' workspace of this exploration's runs
        self.committed_tools: set[ToolKey] = set()  # tool calls whose result is committed
        self.executed: dict[ToolKey, int] = {}
        self.seed = b""  # the journal this exploration started from, as written
        self.seed_state: SessionState | None = None  # its state
        self.known: KnownJournal | None = None  # both, for the stores of its runs (None: they read it all)

    @property
    def session_id(self) -> str:
        return self.golden.target.session_id

    def problem(self, rule: str, detail: str) -> None:
        self.outcome.problems.append(Finding(rule, detail))

    # -- directories --
    def seed_prefix(self, cut: GoldenPoint | None) -> None:
        """Start from the golden run's durable state and workspace just before point `cut` (None: the start)."""
        header_end = self.golden.journal.index(b"\n") + 1
        length, index = (cut.journal_length, cut.index) if cut is not None else (header_end, 0)
        self.sessions, self.out_dir, self.scratch = self.workspace.new()
        write_files(self.scratch, self.golden.workspace.at(index))
        self.seed, meta = seed_session(self.golden, self.sessions, self.out_dir, self.golden.journal[header_end:length])
        self.seed_state = self.golden.state_at(length)
        self.seed_state.meta = meta
        journal = LocalStore(self.sessions).journal_path(self.session_id)
        # the runs' stores decode only what they append to the seed (their open would refuse an invalid one)
        self.known = (
            None if self.stored_violations(self.seed_state) else KnownJournal(journal, self.seed, self.seed_state)
        )
        for journal_length, results in self.golden.commits:
            if journal_length > length:
                break
            self.committed_tools.update(results)

    def load(self, *, upto_seq: int | None = None) -> SessionState:
        """The session's durable state, read from its journal on disk (up to record `upto_seq`) as the runs' stores
        read it: only the records after the seeded prefix are decoded when the journal still begins with it."""
        assert self.sessions is not None
        return LocalStore(self.sessions, known_journal=self.known).load(self.session_id, upto_seq=upto_seq)

    # -- one run --
    def resume(
        self,
        *,
        arm: tuple[CrashPoint, int] | None,
        converge: bool,
        label: str,
        before: SessionState | None = None,
        off_the_record: bool = False,
    ) -> _Phase:
        """Resume the current session in fresh objects; check tools and requests against what was committed.
        `off_the_record`: a crash made a non-idempotent call's outcome unknown (see `_options`)."""
        from strands_durable.runner.run import resume

        assert self.sessions is not None and self.out_dir is not None and self.scratch is not None
        phase = _Phase()
        bus = CrashPoints()
        store = observed_store(self.sessions, known_journal=self.known)
        _observe(bus, phase)
        if arm is not None:
            _arm(bus, phase, *arm)
        if converge:
            _watch_convergence(bus, phase, store, self.golden)
        before = before if before is not None else self.load()
        if before.status == "completed":
            phase.completed = True
            return phase
        self.outcome.runs += 1
        try:
            outcome = resume(
                self.session_id,
                _options(
                    self.golden.target,
                    bus,
                    phase.requests,
                    self.out_dir,
                    self.scratch,
                    off_the_record=off_the_record,
                ),
                store=store,
            )
            phase.completed = outcome.status == "completed"
            if not phase.completed:
                self.problem("status", f"{label} ended {outcome.status}")
        except InjectedCrash:
            pass
        except (DurableError, Exception) as exc:  # a resume that fails is a finding, never an aborted session
            if self.golden.failure is None or failure_of(exc) != self.golden.failure:
                phase.error = exc
                expected = f" (the golden run failed with {self.golden.failure})" if self.golden.failure else ""
                self.problem("resume-failed", f"{label} failed: {failure_of(exc)}{expected}")
        self._check_phase(phase, before, label)
        for results in phase.commits:
            self.committed_tools.update(results)
        return phase

    def _check_phase(self, phase: _Phase, before: SessionState, label: str) -> None:
        for call in phase.tools_run:
            if call.key in self.committed_tools:
                self.problem("tool-rerun", f"{label}: committed tool call {call.path} executed again")
            self.executed[call.key] = self.executed.get(call.key, 0) + 1
            if call.non_idempotent and self.executed[call.key] > 1:
                self.problem(
                    "tool-rerun",
                    f"{label}: non-idempotent tool call {call.path} executed {self.executed[call.key]} times",
                )
        for count, messages in phase.requests.requests:
            if _answer_committed(before, messages, count):
                self.problem(
                    "model-rerequest",
                    f"{label}: a model turn committed before it started was requested again ({count} messages)",
                )

    def stored_violations(self, state: SessionState) -> list[str]:
        """What makes `state`'s conversations invalid as stored (a conversation validated before is not again)."""
        valid = self.golden.valid_histories
        found = []
        for key, conv in sorted(state.conversations.items()):
            if valid.get(key) == conv.messages:  # validated before (pointer-time for the shared messages)
                continue
            violations = history_violations(key, conv.messages)
            found += violations
            if not violations:
                valid[key] = list(conv.messages)
        return found

    def check_stored(self, label: str) -> SessionState:
        state = self.load()
        for violation in self.stored_violations(state):
            self.problem(INVALID_HISTORY, f"{label}: {violation}")
        return state

    def check_end(self, phase: _Phase, synthesized: set[str]) -> None:
        """After the last resume: the durable state equals the golden run's (at convergence or at the end)."""
        state = self.check_stored("after resume")
        golden = self.golden
        if phase.converged_at is not None and not synthesized:
            self.outcome.converged_at = phase.converged_at.id
            # concurrent units may have committed more before the run stopped: judge the journal up to the checkpoint
            stored = self.load(upto_seq=phase.converged_seq)
            if golden.digester.digest(stored) != phase.converged_digest:
                expected = golden.checkpoint_states[phase.converged_digest]
                difference = readable_difference(golden.snapshot_at(expected), snapshot_view(stored))
                self.problem(
                    "durable-state",
                    f"the resumed run converged in memory but its stored session differs at {difference}",
                )
            checkpoint = golden.checkpoint_states[phase.converged_digest]
            self._check_workspace(golden.workspace.at(checkpoint.index + 1))
            return
        if phase.error is not None:
            return
        expected = golden.comparable["status"]
        if state.status != expected:
            self.problem("status", f"the resumed run ended {state.status}, not {expected} as the golden run")
            return
        for violation in final_violations(state):
            self.problem(INVALID_HISTORY, f"after completion: {violation}")
        if synthesized:
            self._check_synthesized(state, synthesized)
            return
        difference = readable_difference(golden.comparable, comparable(state))
        if difference:
            self.problem("identical", f"differs from the golden run at {difference}")
        self._check_out_dir(state)
        self._check_workspace(golden.workspace.final)

    def _check_workspace(self, expected: dict[str, bytes]) -> None:
        difference = workspace_difference(expected, read_files(self.scratch))
        if difference:
            self.problem(WORKSPACE_RULE, f"the tools' workspace differs from the golden run's at {difference}")

    def _check_synthesized(self, state: SessionState, synthesized: set[str]) -> None:
        found: set[str] = set()
        for conv in state.conversations.values():
            for message in conv.messages:
                for block in message.get("content", ()):
                    result = block.get("toolResult")
                    if result and result.get("toolUseId") in synthesized:
                        texts = "".join(c.get("text", "") for c in result.get("content", ()))
                        if result.get("status") == "error" and SYNTHESIZED_RESULT_TEXT in texts:
                            found.add(result["toolUseId"])
        for tool_use_id in sorted(synthesized - found):
            self.problem(
                "synthesized-result",
                f"non-idempotent tool call {tool_use_id} started before the crash; its result is not the synthesized "
                "error",
            )

    def _check_out_dir(self, state: SessionState) -> None:
        assert self.out_dir is not None
        on_disk = {str(p.relative_to(self.out_dir)) for p in self.out_dir.rglob("*") if p.is_file()}
        if on_disk != set(state.artifacts):
            self.problem(
                "identical", f"output directory holds {sorted(on_disk)}, the session recorded {sorted(state.artifacts)}"
            )


def _answer_committed(state: SessionState, request: list[dict[str, Any]], count: int) -> bool:
    """Whether `state` already holds an assistant answer to this exact request (normalised messages)."""
    if not request:
        return False
    last = {"role": request[-1].get("role"), "content": request[-1].get("content")}
    wanted = None
    for conv in state.conversations.values():
        messages = conv.messages
        for end in range(count, len(messages)):
            if messages[end].get("role") != "assistant":
                continue
            candidate = messages[end - 1]
            if candidate.get("role") != last["role"] or candidate.get("content") != last["content"]:
                continue
            if wanted is None:
                wanted = normalize(request)
            if normalize(messages[end - count : end]) == wanted:
                return True
    return False


def pending_unknown(state: SessionState) -> set[str]:
    """toolUseIds of non-idempotent tools that started but whose results are not committed: a resume from this
    state answers them "outcome unknown" (a results message clears both records, so no message is read)."""
    pending: set[str] = set()
    for conv in state.conversations.values():
        if conv.tools_started:
            pending |= conv.tools_started - conv.tool_results.keys()
    return pending


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
    before = sum(
        1
        for p in golden.points[:start_index]
        if p.point.site == target.point.site and p.point.path == target.point.path
    )
    return max(0, target.point.occurrence - before)


def explore_point(golden: GoldenRun, point_id: str, workdir: Path) -> PointOutcome:
    """Crash at one golden crash point, resume, crash again at the same point if the resume passes it."""
    return explore_schedule(golden, [point_id], workdir, repeat_last=True)


def explore_schedule(
    golden: GoldenRun, point_ids: list[str], workdir: Path, *, repeat_last: bool = False
) -> PointOutcome:
    """Crash at each point of `point_ids` in turn (each in the resume of the previous crash), then resume to
    convergence or the end. With `repeat_last`, also crash a second time at the last point when a resume
    passes it again, and require that run to converge as well."""
    with _old_objects_frozen():
        return _explore_schedule(golden, point_ids, workdir, repeat_last=repeat_last)


@contextlib.contextmanager
def _old_objects_frozen() -> Iterator[None]:
    """Exclude the objects that exist before a crash point's runs (strands, the golden run and its states) from
    garbage collection while they run. The runs allocate JSON trees by the hundred thousand; each full collection
    they trigger would otherwise walk every long-lived object again (a quarter of a 50-step chain's exploration
    time). The objects are handed back to the collector afterwards."""
    gc.freeze()
    try:
        yield
    finally:
        gc.collect()  # the runs' own garbage, while the old objects are still frozen (frozen, none of it is freed)
        gc.unfreeze()


def _explore_schedule(golden: GoldenRun, point_ids: list[str], workdir: Path, *, repeat_last: bool) -> PointOutcome:
    outcome = PointOutcome(point_ids=list(point_ids))
    ex = _Exploration(golden, workdir, outcome)
    targets = [golden.point(pid) for pid in point_ids]
    first = targets[0]
    cut = cut_for(golden, first)
    ex.seed_prefix(cut)
    start_index = cut.index if cut is not None else 0
    crash_index = start_index
    label = "crashing run"
    unknown: set[str] = set()  # calls a crash of this schedule left "outcome unknown": later outputs not compared
    for number, target in enumerate(targets):
        before = ex.load()
        unknown |= pending_unknown(before)
        phase = ex.resume(
            arm=(target.point, skip_count(golden, target, crash_index if number else start_index)),
            converge=False,
            label=label,
            before=before,
            off_the_record=bool(unknown),
        )
        if phase.fired is None:
            if number == 0 or phase.error is not None:
                return outcome  # the first fault never fired: the point counts as unexplored and fails
            # a later fault of a schedule may lie behind the resume's path (a tool the resume answers "outcome
            # unknown" never runs again); the run went on to the end
            ex.check_end(phase, unknown)
            return outcome
        outcome.fired.append(target.id)
        crash_index = target.index
        label = f"resume after the crash at {target.id}"
    last = targets[-1]
    while True:  # at most twice: the resume crashes again at the last point if it passes it, then converges
        crashed = ex.check_stored(f"right after the crash at {outcome.fired[-1]}")
        unknown |= pending_unknown(crashed)
        again = repeat_last and len(outcome.fired) == len(targets)
        final = ex.resume(
            arm=(last.point, 0) if again else None,
            converge=not golden.target.full and not unknown,
            label=label,
            before=crashed,
            off_the_record=bool(unknown),
        )
        if final.fired is None:
            break
        outcome.fired.append(last.id)
        label = f"resume after a second crash at {last.id}"
    ex.check_end(final, unknown)
    return outcome


def iter_points(golden: GoldenRun, max_points: int | None = None, seed: int = 0) -> Iterator[str]:
    """The point ids to explore, in a stable order; at most `max_points`, spread over every site kind."""
    ids = golden.ordered_ids()
    if max_points is None or max_points >= len(ids):
        yield from ids
        return
    import random

    by_site: dict[str, list[str]] = {}
    for point_id in ids:
        by_site.setdefault(golden.point(point_id).point.site, []).append(point_id)
    rng = random.Random(seed)
    for group in by_site.values():
        rng.shuffle(group)
    chosen: list[str] = []
    sites = [s for s in SITES if s in by_site]
    while len(chosen) < max_points:
        for site in sites:
            if by_site[site] and len(chosen) < max_points:
                chosen.append(by_site[site].pop())
    yield from sorted(chosen, key=natural_key)
