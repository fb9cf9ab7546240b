"""The runs fault classes drive: the golden run of a workflow (`run_golden`, and `record_cassette`, a golden run
against the real provider that records the cassette), a crashing run (in a child process, dying by a signal at a
crash point), a resuming run in fresh objects (optionally stopping where it converges on the golden run), a run
paused after its first unit, and what the parent does between them (wait for a dead run's threads, digest a crash
state).

Shared by every fault class; each class module keeps only its own exploration.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_durable.agent.durable import StopRequested
from strands_durable.agent.loop import stop_pool_threads
from strands_durable.crashpoints import Commit, CrashPoint, CrashPoints, ToolCall, ToolKey, UnitBoundary
from strands_durable.faults.kit.findings import INVALID_HISTORY, Finding
from strands_durable.faults.kit.golden import (
    DETERMINISTIC_FAILURES,
    GoldenPoint,
    WorkflowGoldenRun,
    failure_of,
    pending_unknown,
)
from strands_durable.faults.kit.judge import continuable, declared_secrets, no_secret_echoes, tool_repeats
from strands_durable.faults.kit.ledger import ToolLedger
from strands_durable.faults.kit.observe import Converged, Phase, observe, observed_store, run_options, watch_convergence
from strands_durable.faults.kit.oracle import committed_tool_keys, comparable
from strands_durable.faults.kit.scratch import write_scratch
from strands_durable.faults.kit.snapshot import SnapshotDigest
from strands_durable.faults.kit.stores import file_store, store_at, stored_bytes
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.faults.kit.workspace import WorkspaceHistory, read_files, write_files
from strands_durable.runner.run import resume, run_workflow
from strands_durable.runner.signals import StopSignals  # imported here, in the warm parent, not in every child
from strands_durable.store.base import read_journal_bytes
from strands_durable.store.fileops import FileOps
from strands_durable.store.state import SessionState
from strands_durable.store.wrapping import WrappingStore

NOT_FIRED = 99  # the child finished without reaching its crash point
_NO_NOTICE = -1  # a descriptor that is never open: the handlers' notice is dropped (they ignore OSError)
_OPS = FileOps()  # chaos scratch files go through the project's one file-operations layer too
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


# -- the golden run ---------------------------------------------------------------------------------------------


def run_golden(
    target: ChaosTarget,
    workdir: Path,
    *,
    store_factory: Callable[[Path], WrappingStore] = observed_store,
    subscribe: Callable[[CrashPoints], None] | None = None,
) -> WorkflowGoldenRun:
    """Run the workflow once without faults, recording every crash point and the durable state at each, in
    `workdir/golden` (sessions/, out/, workspace/). `store_factory` opens the store on the sessions root (the
    power class records every file operation through its own) and `subscribe` adds observers to the bus."""
    if workdir.exists():
        _OPS.remove_tree(workdir)
    sessions, out_dir = workdir / "golden" / "sessions", workdir / "golden" / "out"
    scratch = workdir / "golden" / "workspace"
    workspace = WorkspaceHistory(read_files(target.workspace))
    write_files(scratch, workspace.final)
    store = store_factory(sessions)
    phase = Phase()
    bus = CrashPoints()
    points: list[GoldenPoint] = []
    digester = SnapshotDigest()

    effects: set[ToolKey] = set()  # tool calls that changed the workspace and whose results are not committed yet

    def record(point: CrashPoint) -> None:
        digest = None
        session = store.session
        if point.site == "store.after_commit" and session is not None and session.stored_seq() == session.state.seq:
            digest = digester.digest(session.state)  # a checkpoint a crash leaves stored (S3: not a held record)
        state = store.session.state if store.session is not None else None
        completed = state is not None and state.status == "completed"
        unknown = point.site == "store.before_commit" and state is not None and bool(pending_unknown(state))
        # tools change the workspace only while they run
        if isinstance(point, ToolCall) and point.site == "tool.executed" and workspace.observe(len(points), scratch):
            effects.add(point.key)
        elif isinstance(point, Commit) and point.site == "store.after_commit":
            effects.difference_update(point.tool_results)
        points.append(
            GoldenPoint(
                point,
                len(points),
                store.session.journal_size() if store.session is not None else 0,
                digest,
                completed,
                unknown,
                effect_uncommitted=bool(effects),
            )
        )

    bus.subscribe(record)
    observe(bus, phase)
    if subscribe is not None:
        subscribe(bus)
    options = run_options(target, out_dir, bus, scratch_dir=scratch, requests=phase.requests, lockstep=True)
    failure = None
    try:
        status = run_workflow(target.spec_path, options, store=store, session_id=target.session_id).status
    except DETERMINISTIC_FAILURES as exc:  # explored too: every crash point must resume to this same failure
        from strands_durable.faults.kit.cassette import CassetteMiss

        if isinstance(exc, CassetteMiss):  # the recording is incomplete: that is the finding, not a workflow's end
            raise
        failure, status = failure_of(exc), "failed"
    reader = store_at(sessions)
    final = reader.load(target.session_id)
    problems = [Finding(INVALID_HISTORY, f"golden run: {v}") for v in continuable(final)]
    if (status != "completed" and failure is None) or final.status != status:
        problems.append(Finding("status", f"golden run ended {final.status}"))
    problems += tool_repeats(phase.tools_run, "golden run")
    secret_variables = _secret_variables(target.spec_path)
    secrets = declared_secrets(secret_variables)  # secret-echo for every class; resumes: completed_on_disk
    stored = stored_bytes(reader, target.session_id) if secrets else {}
    problems += [Finding(rule, f"golden run: {detail}") for rule, detail in no_secret_echoes(stored, secrets)]
    return WorkflowGoldenRun(
        target=target,
        workdir=workdir,
        points=points,
        journal=reader.journal_bytes(target.session_id),
        spec_snapshot=reader.spec_snapshot_bytes(target.session_id),
        meta=final.meta,
        comparable=comparable(final),
        tool_executions=len(phase.tools_run),
        model_requests=len(phase.requests.requests),
        problems=problems,
        digester=digester,
        workspace=workspace,
        failure=failure,
        untaken_edges=_untaken_edges(target.spec_path, final),
        secret_variables=secret_variables,
    )


def _secret_variables(spec_path: Path) -> dict[str, str]:
    """The spec's declared secrets (`env.secrets`): name -> environment variable."""
    from strands_durable.runner.run_secrets import secret_variables
    from strands_durable.spec import load_spec

    return secret_variables(load_spec(spec_path))


def _untaken_edges(spec_path: Path, state: SessionState) -> list[str]:
    """The graph edges a run never took (none for other patterns): its crash points cannot cover them."""
    from strands_durable.runner.patterns.graph import untaken_edges
    from strands_durable.spec import load_spec

    spec = load_spec(spec_path)
    if spec.pattern.type != "graph":
        return []
    return untaken_edges(spec.pattern.config, list(state.units.values()))


def record_cassette(target: ChaosTarget, workdir: Path) -> ChaosTarget:
    """Record the target's cassette (faults/kit/cassette.py) with one golden run in `workdir` against the real
    provider and network, save it next to the spec, and turn the target into one that replays it."""
    from strands_durable.faults.kit.cassette import (
        Cassette,
        NetworkCassette,
        cassette_path,
        recording_factory,
        replaying_factory,
    )
    from strands_durable.runner.run_secrets import secret_values
    from strands_durable.spec import load_spec

    # what the session keeps out of its stored text, the cassette keeps out too
    cassette = Cassette(cassette_path(target.spec_path), secrets=tuple(secret_values(load_spec(target.spec_path))))
    target.model = recording_factory(cassette, target.spec_path)
    target.network_tools = NetworkCassette(cassette, recording=True)
    run_golden(target, workdir)
    cassette.save()
    target.model = replaying_factory(cassette)
    target.network_tools = NetworkCassette(cassette, recording=False)
    return target


# -- crashing and resuming runs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trigger:
    """Where a crashing child signals itself: the `skip`-th emission (0-based) of a site and path in its run."""

    site: str
    path: str
    skip: int = 0


def crashing_run(
    target: ChaosTarget,
    sessions: Path,
    out_dir: Path,
    ledger: ToolLedger,
    crash_at: str | Trigger | None,
    signum: int,
    store_factory: Callable[[Path], Any] = store_at,
    *,
    from_prefix: bool = False,
    report: Path | None = None,
    scratch: Path | None = None,
    ready_pipe: int | None = None,
    handlers: type[StopSignals] = StopSignals,
) -> int:
    """A child's run that raises `signum` on itself at `crash_at` (a point id, or a `Trigger`; None: never):
    from scratch, or with `from_prefix` a resume of the session already in `sessions` (a golden journal
    prefix). Before the signal it names the point in `report` (the kernel keeps a killed process's writes).
    `scratch` is the run's copy of the tools' workspace.

    `ready_pipe` is the write end of a pipe for a parent that signals the child from outside: one byte is written to
    it (and it is closed) once the stop handlers are in, and the parent times its signal from that byte (a signal
    before it would end the child by the default action of a signal without a handler, before the run started).
    Once the run has returned, such a child ignores SIGINT and SIGTERM (process-wide), so one arriving while it leaves
    finds it leaving with its run's exit code (what the session holds is then final either way). `handlers` are the
    CLI's two-stage handlers (a deliberately broken subclass in the harness's tests)."""
    bus = CrashPoints()
    ledger.subscribe(bus)
    fired: list[CrashPoint] = []
    seen = [0]

    def reached(point: CrashPoint) -> bool:
        if isinstance(crash_at, str):
            return point.id == crash_at
        if crash_at is None or point.site != crash_at.site or point.path != crash_at.path:
            return False
        seen[0] += 1
        return seen[0] > crash_at.skip

    def at_point(point: CrashPoint) -> None:
        if not fired and reached(point):
            fired.append(point)
            if report is not None:
                write_scratch(report, json.dumps([point.site, point.path, point.occurrence]).encode())
            os.kill(os.getpid(), signum)

    bus.subscribe(at_point)
    stops = handlers(notice_fd=_NO_NOTICE)  # the CLI's handlers, without their notice on the terminal
    options = run_options(target, out_dir, bus, scratch_dir=scratch, stop_requested=stops.requested)
    if ready_pipe is not None:
        # what `stops` gives the signals back to when it ends: ignored, in every thread of the process (a store's
        # background thread, still alive, would otherwise take a signal sent to the process by its default action)
        for signum in _STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
    with stops:
        if ready_pipe is not None:
            os.write(ready_pipe, b"r")
            os.close(ready_pipe)
        try:
            if from_prefix:
                resume(target.session_id, options, store=store_factory(sessions))
            else:
                run_workflow(target.spec_path, options, store=store_factory(sessions), session_id=target.session_id)
        except (StopRequested, KeyboardInterrupt):
            return stops.exit_code
    return 0 if fired or crash_at is None else NOT_FIRED


@dataclass(frozen=True)
class Convergence:
    """Where a resume stopped: the checkpoint whose snapshot equalled the golden run's, its journal record and
    the digest of the golden state it equalled."""

    point: CrashPoint
    seq: int
    digest: str


def resuming_run(
    target: ChaosTarget,
    sessions: Path,
    out_dir: Path,
    ledger: ToolLedger,
    *,
    converge_to: WorkflowGoldenRun | None = None,
    store_factory: Callable[[Path], WrappingStore] = observed_store,
    scratch: Path | None = None,
) -> Convergence | None:
    """Resume the session in fresh objects; with `converge_to`, stop at the first commit whose snapshot (in
    memory) equals the golden run's at one of its checkpoints. The durable state there is judged afterwards."""
    bus = CrashPoints()
    ledger.subscribe(bus)
    pending = uncommitted_tools(converge_to, ledger, sessions) if converge_to is not None else None
    store = store_factory(sessions)
    phase = Phase()
    if converge_to is not None and pending is not None:
        watch_convergence(bus, phase, store, converge_to, pending)
    try:
        resume(target.session_id, run_options(target, out_dir, bus, scratch_dir=scratch), store=store)
    except Converged:
        assert phase.converged_at is not None
        return Convergence(phase.converged_at, phase.converged_seq, phase.converged_digest)
    return None


def uncommitted_tools(golden: WorkflowGoldenRun, ledger: ToolLedger, sessions: Path) -> set[ToolKey] | None:
    """The tool calls that the earlier processes of an exploration started (the ledger's `tool.before`) and whose
    results the session does not hold: the tools' workspace may hold their effects until a resume commits them
    (`watch_convergence`). Nothing when the tools never change the workspace; None when a started call is not one
    of the golden run's (its effects cannot be told apart: the resume runs to the end)."""
    if not golden.workspace.changed:
        return set()
    started = {path for site, path in ledger.entries() if site == "tool.before"}
    keys = {p.point.path: p.point.key for p in golden.points if isinstance(p.point, ToolCall)}
    if not started <= keys.keys():
        return None
    return {keys[path] for path in started} - committed_tool_keys(store_at(sessions).load(golden.target.session_id))


def wait_for_threads(timeout: float = 5.0) -> None:
    """Let the threads of an in-process run end before the next fork."""
    stop_pool_threads()
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join(timeout)


def journal_digest(journal: bytes) -> str:
    """The digest of a journal's committed events (timestamps left out): one per distinct crash state."""
    contents = read_journal_bytes(journal)
    events = [record.get("events") for record in contents.records]
    return hashlib.sha256(json.dumps(events, sort_keys=True, default=str).encode()).hexdigest()


def paused_after_first_unit(
    golden: WorkflowGoldenRun, sessions: Path, out_dir: Path, scratch: Path | None = None
) -> Path:
    """Run the golden workflow until its first unit is committed, stop there cleanly; the session's directory."""
    bus = CrashPoints()
    done: list[CrashPoint] = []
    bus.subscribe(UnitBoundary, lambda p: done.append(p) if p.site == "unit.after" else None)
    with contextlib.suppress(StopRequested):
        run_workflow(
            golden.target.spec_path,
            run_options(golden.target, out_dir, bus, scratch_dir=scratch, stop_requested=lambda: bool(done)),
            store=file_store(sessions),
            session_id=golden.target.session_id,
        )
    return file_store(sessions).directory_of(golden.target.session_id)
