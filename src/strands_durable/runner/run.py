"""The programmatic API the CLI and the pytest plugin drive: run a spec, resume a session, read sessions."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strands_durable.agent.durable import DurableInvoker, StopRequested
from strands_durable.crashpoints import CrashPoints, InjectedCrash
from strands_durable.errors import CorruptSession, DurableError, HitlPaused, SessionCompleted, SpecError, UsageError
from strands_durable.history.secrets import redact_secrets
from strands_durable.runner.context import RunContext
from strands_durable.runner.options import RunOptions
from strands_durable.store import events
from strands_durable.store.base import Session, SessionStore
from strands_durable.store.factory import open_store
from strands_durable.store.state import AGENT_PATTERN, SessionState

if TYPE_CHECKING:
    from strands_durable.runner.prepared import PreparedWorkflow

SPEC_CHANGED_WARNING = "⚠ Warning: Spec file has changed since session creation"


@dataclass
class RunOutcome:
    session_id: str
    status: str
    last_response: str
    tokens_before: int
    usage: dict[str, int]
    artifacts: list[str] = field(default_factory=list)


def default_store(sessions_dir: Path | str | None = None) -> SessionStore:
    return open_store(sessions_dir)


def run_workflow(
    spec_path: str | Path,
    options: RunOptions | None = None,
    *,
    store: SessionStore | None = None,
    session_id: str | None = None,
) -> RunOutcome:
    """Run a spec from the start in a new session (`session_id`: the caller's id for it, a new UUID when None)."""
    store = store or default_store()
    spec, session, options = create_run(spec_path, options, store=store, session_id=session_id)
    return _execute(spec, session, options, store, resumed=False)


def create_run(
    spec_path: str | Path,
    options: RunOptions | None = None,
    *,
    store: SessionStore | None = None,
    session_id: str | None = None,
    engine: dict[str, Any] | None = None,
) -> tuple[Any, Session, RunOptions]:
    """Check a spec and create its session (spec snapshot, variables, runtime choices), running nothing.

    Returns the loaded spec, the open session (its lease held) and the options as the run will use them; an
    engine that runs the units elsewhere (strands_durable.temporal) closes the session and resumes it there.
    """
    from strands_durable.runner.artifacts import check_existing, resolve_out
    from strands_durable.runner.patterns import executor_for
    from strands_durable.runner.preflight import check_before_session, check_imports, warn_undeclared_vars
    from strands_durable.spec import load_spec, resolve_variables

    options = options or RunOptions()
    store = store or default_store()
    spec = load_spec(spec_path)
    executor_for(spec.pattern.type)  # an unsupported pattern fails before a session exists
    variables = resolve_variables(spec, options.cli_vars)
    warn_undeclared_vars(spec, options)
    check_before_session(spec, variables, options)
    if engine is None:  # on an engine the workers import models and tools, with their own packages and credentials
        check_imports(spec, options)
    created = options.created_at or dt.datetime.now(dt.timezone.utc)
    provider = options.provider or spec.runtime.provider
    out_dir = resolve_out(options.out_dir)
    check_existing(spec, out_dir, {**variables, "name": spec.name}, force=options.force, ours=set())
    meta = {
        "workflow_name": spec.name,
        "pattern": spec.pattern.type,
        "spec_path": str(spec.source_path),
        "spec_hash": spec.content_hash,
        "variables": variables,
        "created_at": created.isoformat(),
        "runtime": {
            "provider": provider,
            "provider_override": options.provider,
            "model_id": spec.runtime.model_id,
            "seed": options.seed,
            "out_dir": str(out_dir),
            "force": options.force,
            "allow_python_exec": options.allow_python_exec,
            "network": options.network,
        },
    }
    if engine is not None:
        meta["engine"] = engine  # where the run's units are scheduled: {"name": "temporal", "address": ...}
    crash = options.crash_points or CrashPoints()
    session = store.create(meta, spec.source_bytes, crash_points=crash, session_id=session_id)
    return spec, session, replace(options, out_dir=out_dir, crash_points=crash)


def resume(
    session_id: str,
    options: RunOptions | None = None,
    *,
    store: SessionStore | None = None,
    prepared: PreparedWorkflow | None = None,
) -> RunOutcome:
    """Resume a paused, failed, interrupted or stale session where its commits end. `prepared`: what a caller
    resuming the same session many times built once (runner/prepared.py); it serves only the session and spec
    file it was prepared for, and everything a run could leave state in is still built anew."""
    from strands_durable.runner.artifacts import recorded_out
    from strands_durable.runner.positions import check_committed_positions

    options = options or RunOptions()
    store = store or default_store()
    full_id = prepared.session_id if prepared is not None and session_id == prepared.session_id else None
    full_id = full_id or store.resolve(session_id)  # prepared: an exact id, which `open` looks up anyway
    crash = options.crash_points or CrashPoints()
    session = store.open(full_id, crash_points=crash)
    if session.state.status == "completed":
        session.abandon()  # let go without writing anything: a completed session stays as it is
        raise SessionCompleted(full_id)
    engine = session.state.meta.get("engine") or {}
    if engine.get("name") == "temporal" and options.unit_gate is None:
        session.abandon()
        raise UsageError(
            f"Session {full_id} runs on Temporal ({engine.get('address')}, task queue {engine.get('task_queue')}): "
            f"follow or resume it with --engine temporal --temporal {engine.get('address')}"
        )
    if session.state.meta.get("pattern") == AGENT_PATTERN:
        session.abandon()
        raise UsageError(
            f"Session {full_id} is a plain-Python agent session: it resumes from Python (build the Agent with "
            f"DurableSessionManager(session_id={full_id!r}) and call agent() or re-send the prompt)"
        )
    try:
        state = session.state
        meta = state.meta
        reporter = options.reporter
        for warning in session.warnings:
            reporter.warning(warning)
        if options.cli_vars:
            reporter.warning("--var is ignored with --resume: the session's original variables are used")
        if prepared is not None and not prepared.serves(full_id, meta):
            prepared = None  # another session, or one created from another spec: resumed from its own
        # prepared: the spec file as read when prepared, with the bytes this session recorded
        spec = prepared.spec if prepared is not None else _recorded_spec(session, reporter)
        check_committed_positions(spec, state, prepared.found_positions if prepared is not None else None)
        runtime = meta.get("runtime", {})
        options = replace(
            options,
            provider=runtime.get("provider_override"),
            seed=int(runtime.get("seed", 0)),
            out_dir=recorded_out(runtime.get("out_dir", options.out_dir)),
            force=bool(runtime.get("force", False)),
            allow_python_exec=bool(runtime.get("allow_python_exec", False)),
            network=bool(runtime.get("network", False)),
            cli_vars=[],
            crash_points=crash,
        )
    except BaseException:
        session.close()
        raise
    return _execute(spec, session, options, store, resumed=True, prepared=prepared)


def _recorded_spec(session: Session, reporter: Any) -> Any:
    """The spec a session resumes with: its spec file (warning when its bytes changed since the session was
    created), or the session's snapshot when the file is gone."""
    from strands_durable.spec import bytes_hash, load_spec_bytes, read_spec_bytes

    meta = session.state.meta
    spec_path = Path(meta["spec_path"])
    if not spec_path.is_file():
        reporter.warning(f"Spec file {spec_path} is gone; running the session's spec_snapshot.yaml")
        return _snapshot_spec(session, spec_path)
    raw = read_spec_bytes(spec_path)  # read once: hashed here, parsed (or found parsed) by the loader
    current = bytes_hash(raw)
    if current != meta["spec_hash"]:
        reporter.warning(
            f"{SPEC_CHANGED_WARNING}\n  Original: {meta['spec_hash'][:8]}...\n"
            f"  Current: {current[:8]}...\n  Continuing with execution..."
        )
    return load_spec_bytes(raw, spec_path)


def _snapshot_spec(session: Session, spec_path: Path) -> Any:
    """The spec a session was created from, read from its snapshot (the spec file is gone); errors name the
    snapshot: CorruptSession (exit 17) when it no longer holds the bytes the session recorded the sha256 of."""
    from strands_durable.spec import bytes_hash, load_spec_text

    raw = session.spec_snapshot()
    name = session.spec_snapshot_name()
    recorded = session.state.meta.get("spec_hash")
    if isinstance(recorded, str) and bytes_hash(raw) != recorded:
        raise CorruptSession(name, "does not hold the spec this session was created from (its sha256 differs)")
    try:
        return load_spec_text(raw, source_path=spec_path)  # `$ref` paths are read beside the original file
    except SpecError as exc:
        raise SpecError(name, exc.detail, key_path=exc.key_path, line=exc.line) from None


def _execute(
    spec: Any,
    session: Session,
    options: RunOptions,
    store: SessionStore,
    *,
    resumed: bool,
    prepared: PreparedWorkflow | None = None,
) -> RunOutcome:
    from strands_durable.runner.artifacts import write_artifacts
    from strands_durable.runner.native_tools import ENVIRONMENT_KEY, NativeToolEnvironment, native_tools
    from strands_durable.runner.patterns import executor_for
    from strands_durable.runner.skills import skill_directories
    from strands_durable.runner.tools import OFFLINE_PROVIDERS, ToolResolver, unknown_tool_text

    state = session.state
    meta = state.meta
    for warning in spec.warnings:
        options.reporter.warning(warning)
    crash = options.crash_points or CrashPoints()
    workspace = store.workspace(state.session_id)
    created = dt.datetime.fromisoformat(meta["created_at"])
    provider = meta["runtime"]["provider"]
    abandoned = False
    ctx: RunContext | None = None
    try:
        os.environ.setdefault("BYPASS_TOOL_CONSENT", "true")
        offline = provider in OFFLINE_PROVIDERS
        scratch = (options.scratch_dir or workspace.scratch_dir) if offline else None
        environment = NativeToolEnvironment(
            clock=(lambda: created) if offline else (lambda: dt.datetime.now(dt.timezone.utc)),
            scratch_dir=scratch,
            fileops=workspace.fileops,
            skills=prepared.skills if prepared is not None else skill_directories(spec),
        )
        cancelled = threading.Event()  # concurrent units stop at their next safe point once one of them crashed
        ctx = RunContext(
            spec=spec,
            session=session,
            options=options,
            variables=dict(meta.get("variables", {})),
            invoker=DurableInvoker(
                session,
                crash,
                stop_requested=lambda: cancelled.is_set() or options.stop_requested(),
                validate_requests=options.validate_requests,
                cancel_in_flight=options.cancel_in_flight,
                defer_commits=options.defer_commits,
            ),
            tools=ToolResolver(
                spec,
                provider=provider,
                native=native_tools(),
                extra=options.extra_tools,
                allow_python_exec=options.allow_python_exec,
                network=options.network,
                network_tools=options.network_tools,
                workdir=scratch,
                fileops=workspace.fileops,
                catalog=prepared.tools if prepared is not None else None,
            ),
            crash=crash,
            created_at=created,
            provider=provider,
            cancelled=cancelled,
            invocation_state={ENVIRONMENT_KEY: environment},
        )
        unknown = (
            prepared.unknown_tool_names(ctx.tools.extra, ctx.tools.native)
            if prepared is not None
            else ctx.tools.unknown_names()
        )
        for name, where in unknown.items():
            options.reporter.warning(f"Warning: {unknown_tool_text(name, where)}")
        options.reporter.session_started(state.session_id, spec.name, resumed=resumed)
        tokens_before = state.usage()["total"] if resumed else 0
        unit_pass = options.unit_gate is not None and options.unit_gate.unit_pass  # siblings commit meanwhile
        if state.status != "running" and not unit_pass:
            session.commit([events.status("running", "resumed")], path="resume")
        ctx.telemetry = _telemetry(spec, state.session_id, resumed, options)
        with ctx.telemetry.workflow() if ctx.telemetry is not None else contextlib.nullcontext():
            final_context = executor_for(spec.pattern.type)(ctx)
            artifacts = write_artifacts(ctx, final_context, workspace.fileops)
        session.commit([events.status("completed")], path="complete")
        usage = state.usage()
        options.reporter.finished("completed", tokens_before, usage["total"])
        return RunOutcome(
            state.session_id,
            "completed",
            str(final_context.get("last_response", "")),
            tokens_before,
            usage,
            artifacts,
        )
    except InjectedCrash:
        abandoned = True
        _abandon(session)
        raise
    except (StopRequested, KeyboardInterrupt):
        if not (options.unit_gate is not None and options.unit_gate.unit_pass):  # a unit pass: the stop step's
            _safe_commit(session, events.status("paused", "interrupted"))
        raise
    except HitlPaused:
        raise
    except DurableError as exc:
        reason = redact_secrets(str(exc), ctx.secrets or ()) if ctx is not None else str(exc)
        _safe_commit(session, events.status("failed", reason[:500]))
        raise
    finally:
        if ctx is not None:
            ctx.tools.close()  # MCP servers this run started
            if ctx.telemetry is not None:
                ctx.telemetry.close()
        if not abandoned:
            session.close()


def _telemetry(spec: Any, session_id: str, resumed: bool, options: RunOptions) -> Any:
    """The run's trace when the spec has `telemetry.otel` (OpenTelemetry is imported only then)."""
    from strands_durable.runner.telemetry import RunTelemetry, wants_telemetry

    if not wants_telemetry(spec):
        return None
    return RunTelemetry(
        spec,
        session_id=session_id,
        resumed=resumed,
        exporter=options.trace_exporter,
        warn=options.reporter.warning,
    )


def _safe_commit(session: Session, event: dict[str, Any]) -> None:
    with contextlib.suppress(DurableError, OSError):
        session.commit([event], path="status")


def _abandon(session: Session) -> None:
    """Let go of a session as a dead process would: no flush, no final record; only the lease is released."""
    session.abandon()


def load_session(session_id: str, *, store: SessionStore | None = None) -> SessionState:
    store = store or default_store()
    return store.load(store.resolve(session_id))
