"""`strands run`: run a spec in a new session, or resume one, printing the user's document's lines.

Heavy modules (the runner, strands-agents) are imported inside the command, never when the CLI starts.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer

from strands_durable.cli.failure import fail, report_failure, set_debug
from strands_durable.cli.run_request import CLOCK_ENV, RunRequest, pinned_clock, program_name, run_options
from strands_durable.cli.sessions import complete_session_id
from strands_durable.errors import DurableError, ExitCode, SessionCompleted, UsageError, exit_code_for
from strands_durable.wording import counted


def run(
    spec: Annotated[
        Path | None, typer.Argument(metavar="SPEC", help="Workflow spec (YAML or JSON).", show_default=False)
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            metavar="ID",
            help="Resume a session (full id or 8+ char prefix).",
            autocompletion=complete_session_id,
        ),
    ] = None,
    hitl_response: Annotated[
        str | None, typer.Option("--hitl-response", metavar="TEXT", help="Answer the human-in-the-loop pause.")
    ] = None,
    var: Annotated[
        list[str] | None, typer.Option("--var", metavar="KEY=VALUE", help="Set an input variable (repeatable).")
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option("--provider", metavar="NAME", help="Override runtime.provider (synthetic runs offline)."),
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", metavar="N", help="Seed of the synthetic model (default 0).")
    ] = None,
    sessions_dir: Annotated[
        str | None,  # a directory or an s3:// URL (a Path would fold its `//`)
        typer.Option("--sessions-dir", metavar="DIR", help="Where sessions live (default $STRANDS_SESSIONS_DIR)."),
    ] = None,
    out: Annotated[
        str | None,  # a directory or an s3:// URL (a Path would fold its `//`)
        typer.Option("--out", metavar="DIR", help="Artifact directory or s3://BUCKET/PREFIX (default ./artifacts)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing artifact files.")] = False,
    no_save_session: Annotated[
        bool, typer.Option("--no-save-session", help="Keep the session in memory only (cannot be resumed).")
    ] = False,
    auto_resume: Annotated[
        bool, typer.Option("--auto-resume", help="Resume the newest unfinished session of SPEC, else start fresh.")
    ] = False,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print one JSON document on stdout; messages go to stderr.")
    ] = False,
    allow_python_exec: Annotated[
        bool,
        typer.Option(
            "--allow-python-exec",
            help=(
                "Let the python_exec tool run Python code: a child process with no secrets in its environment, "
                "memory/CPU/file-size/process limits and its process group killed at the timeout; inside bubblewrap "
                "(bwrap) where it starts: no network, read-only system, only scratch writable. Without bubblewrap "
                "the code can read and write what you can and reach the network."
            ),
        ),
    ] = False,
    network: Annotated[
        bool, typer.Option("--network", help="Let tools use the network even with an offline provider.")
    ] = False,
    clock: Annotated[
        str | None,
        typer.Option(
            "--clock",
            metavar="TIME",
            envvar=CLOCK_ENV,
            help="Pin the session's clock (e.g. 2026-01-01T00:00:00Z): template `timestamp` and, offline, "
            "`current_time`, so runs at one seed repeat exactly.",
        ),
    ] = None,
    engine: Annotated[
        str, typer.Option("--engine", metavar="ENGINE", help="local (default), or temporal: units run on workers.")
    ] = "local",
    temporal: Annotated[
        str | None, typer.Option("--temporal", metavar="HOST:PORT", help="Temporal server (--engine temporal).")
    ] = None,
    namespace: Annotated[str, typer.Option("--namespace", metavar="N", help="Temporal namespace.")] = "default",
    task_queue: Annotated[
        str, typer.Option("--task-queue", metavar="Q", help="Temporal task queue of the workers.")
    ] = "strands-durable",
    detach: Annotated[bool, typer.Option("--detach", help="Start on Temporal and return at once.")] = False,
    cancel: Annotated[
        str | None,
        typer.Option(
            "--cancel",
            metavar="ID",
            help="Cancel a run on Temporal (--engine temporal).",
            autocompletion=complete_session_id,
        ),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
) -> None:
    """Run a workflow spec, or resume a session.

    Every step, model turn and tool result is committed as it finishes. Ctrl+C stops at the next safe point
    (exit 130) and prints the command that resumes the session; a second Ctrl+C aborts at once.
    """
    set_debug(debug)
    request = RunRequest(
        spec=spec,
        resume_id=resume,
        hitl_response=hitl_response,
        cli_vars=list(var or []),
        provider=provider,
        seed=seed,
        sessions_dir=sessions_dir,
        out=out,
        force=force,
        save_session=not no_save_session,
        auto_resume=auto_resume,
        json_output=json_output,
        allow_python_exec=allow_python_exec,
        network=network,
        clock=clock,
    )
    if engine == "temporal" or cancel is not None:
        from strands_durable.cli.temporal import EngineFlags, run_on_temporal

        if spec is None and resume is None and cancel is None:
            fail(UsageError("strands run --engine temporal needs a SPEC file, --resume ID or --cancel ID"))
        raise typer.Exit(run_on_temporal(request, EngineFlags(temporal, namespace, task_queue, detach, cancel)))
    if engine != "local":
        fail(UsageError(f"--engine must be local or temporal, got {engine!r}"))
    try:
        check_flags(request)
    except DurableError as exc:
        fail(exc)
    raise typer.Exit(execute(request))


def check_flags(request: RunRequest) -> None:
    if request.auto_resume and request.spec is None:
        raise UsageError("--auto-resume needs a SPEC file")
    if request.spec is None and request.resume_id is None:
        raise UsageError("strands run needs a SPEC file, or --resume ID to continue a session")
    if request.spec is not None and request.resume_id is not None:
        raise UsageError("give either a SPEC file or --resume ID, not both (a resume re-reads the session's spec)")
    if not request.save_session and (request.resume_id is not None or request.auto_resume):
        raise UsageError("--no-save-session cannot resume: drop it to resume a saved session")
    pinned_clock(request.clock)  # a malformed time fails before anything runs
    if request.resume_id is not None:
        request.ignored_with_resume = [
            flag
            for flag, given in (
                ("--provider", request.provider is not None),
                ("--seed", request.seed is not None),
                ("--out", request.out is not None),
                ("--force", request.force),
                ("--allow-python-exec", request.allow_python_exec),
                ("--network", request.network),
                ("--clock", request.clock is not None and not os.environ.get(CLOCK_ENV)),
            )
            if given
        ]


def resume_command(request: RunRequest, session_id: str, *, hitl: bool = False) -> str:
    parts = [program_name(), "run", "--resume", session_id]
    if request.sessions_dir is not None:
        parts += ["--sessions-dir", str(request.sessions_dir)]
    command = " ".join(shlex.quote(part) for part in parts)
    return command + (' --hitl-response "<your answer>"' if hitl else "")


def execute(request: RunRequest) -> int:
    """Run or resume; print the outcome; return the exit code."""
    from strands_durable.agent.durable import StopRequested
    from strands_durable.cli.output import make_reporter
    from strands_durable.crashpoints import CrashPoints, ToolCall
    from strands_durable.errors import HitlPaused
    from strands_durable.operations import retention_from_env
    from strands_durable.runner.run import resume, run_workflow
    from strands_durable.runner.signals import RunningTools, StopSignals
    from strands_durable.store import MemoryStore, open_store

    human: TextIO = sys.stderr if request.json_output else sys.stdout
    live = not request.json_output and human.isatty()
    reporter = make_reporter(human, sys.stderr, live=live, on_output_closed=lambda: signals.output_closed())
    running = RunningTools()  # a stop waits for the running tools: its notice names them
    crash_points = CrashPoints()
    crash_points.subscribe(ToolCall, running.observe)
    signals = StopSignals(
        notice=reporter.notice if live else None,
        on_abort=lambda: reporter.abort_text() + _abort_lines(request, reporter.session_id or session_id, signals),
        running_tools=running.names,
    )
    session_id: str | None = None
    try:
        retention_from_env()  # a bad value fails before the run, not after it
        store = open_store(request.sessions_dir) if request.save_session else MemoryStore()
        session_id = session_to_resume(request, store, reporter, human)
    except BrokenPipeError:
        raise  # a closed stdout: main() ends with exit 141, no error
    except Exception as exc:
        return _failed(request, None, exc, human)
    outcome: Any = None
    failure: BaseException | None = None
    try:
        with signals:
            options = run_options(
                request,
                hitl_response=request.hitl_response,
                reporter=reporter,
                stop_requested=signals.requested,
                crash_points=crash_points,
            )
            if session_id is not None:
                outcome = resume(session_id, options, store=store)
            else:
                outcome = run_workflow(request.spec, options, store=store)  # type: ignore[arg-type]
    except BrokenPipeError:
        raise
    except (StopRequested, Exception) as exc:  # a DurableError, an OSError (12) or a bug (70) ends as any failure
        failure = exc
    finally:
        reporter.close()
    session_id = reporter.session_id or session_id
    if failure is None:
        code = _completed(request, outcome, human)
    elif isinstance(failure, StopRequested):
        code = _interrupted(request, session_id, signals.exit_code, signals.signal_name, human)
    elif isinstance(failure, HitlPaused):
        code = _paused_for_human(request, store, session_id, failure, human)
    else:
        code = _failed(request, session_id, failure, human)
    if request.save_session and session_id is not None:
        _apply_retention(store, session_id)
    return code


def session_to_resume(request: RunRequest, store: Any, reporter: Any, human: TextIO) -> str | None:
    """The full id of the session to resume (`--resume`, or `--auto-resume`'s find), or None for a new one."""
    from strands_durable.operations import newest_unfinished

    target = request.resume_id
    if request.auto_resume and request.spec is not None:
        found = newest_unfinished(store, request.spec)
        if found is None:
            print("No unfinished session of this spec: starting a new one", file=sys.stderr)
            return None
        target = found.session_id
        if request.cli_vars:
            reporter.warning("--var is ignored with --auto-resume: the session's original variables are used")
            request.cli_vars = []
    if target is None:
        return None
    session_id = store.resolve(target)
    stored = store.load(session_id)
    if stored.status == "completed":
        raise SessionCompleted(session_id)
    from strands_durable.cli.session_views import short_id

    print(f"Resuming session: {short_id(session_id)}", file=human, flush=True)
    for flag in request.ignored_with_resume:
        reporter.warning(f"{flag} is ignored with --resume: the session's recorded choices are used")
    if request.hitl_response is not None and not stored.pattern_state.get("pending_hitl"):
        reporter.warning(
            f"--hitl-response is ignored: session {short_id(session_id)} is not waiting for a human answer "
            f"(status {stored.status})"
        )
        request.hitl_response = None
    return session_id


def _completed(request: RunRequest, outcome: Any, human: TextIO) -> int:
    for path in outcome.artifacts:
        print(f"Artifact written: {path}", file=human)
    if request.json_output:
        _print_json(
            {
                "session_id": outcome.session_id,
                "status": outcome.status,
                "exit_code": 0,
                "last_response": outcome.last_response,
                "usage": outcome.usage,
                "tokens_before": outcome.tokens_before,
                "artifacts": outcome.artifacts,
            }
        )
    return int(ExitCode.OK)


def _abort_lines(request: RunRequest, session_id: str | None, signals: Any) -> str:
    """What a second signal prints before the process ends at once (written from the signal handler)."""
    name = signals.signal_name
    why = f"{name} while waiting on {signals.stuck_on}" if signals.stuck_on else f"{name} twice"
    if not request.save_session or session_id is None:
        return f"\nAborted ({why}); the session was not saved\n"
    return (
        f"\nAborted ({why}): session {session_id} keeps everything committed so far\n"
        f"Resume with: {resume_command(request, session_id)}\n"
    )


def _interrupted(request: RunRequest, session_id: str | None, code: int, name: str, human: TextIO) -> int:
    """The contract's interrupted ending: the resume command goes to stderr (stdout may be a closed pipe)."""
    if not request.save_session or session_id is None:
        print(f"Interrupted ({name}); the session was not saved (--no-save-session)", file=sys.stderr)
        command = None
    else:
        command = resume_command(request, session_id)
        print(f"Interrupted ({name}): session {session_id} paused at a safe point", file=sys.stderr)
        print(f"Resume with: {command}", file=sys.stderr)
    if request.json_output and code != ExitCode.SIGPIPE:
        _print_json(
            {
                "session_id": session_id,
                "status": "paused",
                "reason": "interrupted",
                "exit_code": code,
                "resume_command": command,
            }
        )
    return code


def _paused_for_human(request: RunRequest, store: Any, session_id: str | None, exc: Exception, human: TextIO) -> int:
    code = int(ExitCode.HITL_PAUSED)
    pending: dict[str, Any] = {}
    if session_id is not None:
        pending = dict(store.load(session_id).pattern_state.get("pending_hitl") or {})
    print("⏸ Paused for human input" + (f" at {pending['unit']}" if pending.get("unit") else ""), file=human)
    if pending:
        print(f"Prompt: {pending.get('prompt', '')}", file=human)
        if pending.get("context"):
            print("Context:", file=human)
            print(pending["context"], file=human)
        if pending.get("default") is not None:
            print(f"Default answer: {pending['default']}", file=human)
    else:
        print(str(exc), file=human)
    command = None
    if request.save_session and session_id is not None:
        command = resume_command(request, session_id, hitl=True)
        print(f"Resume with: {command}", file=human)
    else:
        print("The session was not saved (--no-save-session): run without it to answer and resume", file=human)
    if request.json_output:
        _print_json(
            {
                "session_id": session_id,
                "status": "paused",
                "reason": "hitl",
                "exit_code": code,
                "hitl": {k: pending.get(k) for k in ("unit", "prompt", "context", "default")},
                "resume_command": command,
            }
        )
    return code


def _failed(request: RunRequest, session_id: str | None, exc: Exception, human: TextIO) -> int:
    code = exit_code_for(exc)
    if request.json_output:
        _print_json({"session_id": session_id, "status": "failed", "exit_code": code, "error": str(exc)})
    elif session_id is not None and request.save_session and code not in (ExitCode.USAGE, ExitCode.SESSION_UNUSABLE):
        command = resume_command(request, session_id)
        print(f"Session {session_id} stopped; fix the cause and resume with: {command}", file=human)
    return report_failure(exc)


def _apply_retention(store: Any, session_id: str) -> None:
    from strands_durable.operations import RETENTION_ENV, apply_retention

    try:
        report = apply_retention(store, keep={session_id})
    except (DurableError, OSError) as exc:
        print(f"⚠ Warning: automatic cleanup ({RETENTION_ENV}) failed: {exc}", file=sys.stderr)
        return
    if report is not None and report.deleted:
        print(
            f"Removed {counted(len(report.deleted), 'session')} older than {os.environ[RETENTION_ENV]} "
            f"({RETENTION_ENV})",
            file=sys.stderr,
        )
    failures = [*report.unfinished, *report.failed] if report is not None else []
    for _, exc in failures:  # the run itself succeeded: a warning, not its exit
        print(f"⚠ Warning: automatic cleanup ({RETENTION_ENV}) failed: {exc}", file=sys.stderr)


def _print_json(document: dict[str, Any]) -> None:
    print(json.dumps(document, indent=2, ensure_ascii=False))
