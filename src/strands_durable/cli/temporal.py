"""`strands worker` and `strands run --engine temporal`: runs on Temporal, followed from this terminal.

A run started here lives on the Temporal server and the shared sessions store; this process only follows it.
Ctrl+C detaches (exit 0: the run goes on) and says how to follow or cancel it.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import time
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from strands_durable.cli.failure import fail
from strands_durable.errors import DurableError, ExitCode, UsageError

FOLLOW_POLL_S = 0.5
STATUS_QUERY_TIMEOUT_S = 5.0


@dataclass
class EngineFlags:
    """`--temporal`, `--namespace`, `--task-queue`, `--detach`, `--cancel` of `strands run`."""

    address: str | None
    namespace: str
    task_queue: str
    detach: bool
    cancel_id: str | None


def worker(
    temporal: Annotated[str, typer.Option("--temporal", metavar="HOST:PORT", help="The Temporal server.")],
    sessions_dir: Annotated[
        str | None,
        typer.Option("--sessions-dir", metavar="DIR", help="The sessions store every worker shares (s3://...)."),
    ] = None,
    namespace: Annotated[str, typer.Option("--namespace", metavar="N", help="Temporal namespace.")] = "default",
    task_queue: Annotated[
        str, typer.Option("--task-queue", metavar="Q", help="Task queue to serve.")
    ] = "strands-durable",
    max_concurrent_units: Annotated[
        int, typer.Option("--max-concurrent-units", metavar="N", help="Units this worker runs at once.")
    ] = 4,
) -> None:
    """Serve runs from a Temporal server: each unit of work is an activity on some worker.

    Every worker of a task queue must share one sessions store (`--sessions-dir s3://BUCKET/PREFIX`, or a
    directory all of them see). Ctrl+C stops the worker; its unfinished units are retried on another worker.
    """
    from strands_durable.temporal import location
    from strands_durable.temporal.engine import require_temporal, run_worker

    where = sessions_dir or os.environ.get("STRANDS_SESSIONS_DIR")
    try:
        require_temporal()
        if not where:
            raise UsageError("strands worker needs --sessions-dir (the store every worker and run shares)")

        def ready() -> None:
            print(
                f"Worker on {temporal} (namespace {namespace}, task queue {task_queue}) serving sessions in "
                f"{location(where)}; Ctrl+C stops it",
                flush=True,
            )

        asyncio.run(
            run_worker(
                temporal,
                where,
                namespace=namespace,
                task_queue=task_queue,
                max_concurrent_units=max_concurrent_units,
                ready=ready,
            )
        )
    except DurableError as exc:
        fail(exc)
    except KeyboardInterrupt:
        print("Worker stopped; units it was running are retried on another worker", file=sys.stderr)
        raise typer.Exit(0) from None


def run_on_temporal(request: Any, flags: EngineFlags) -> int:
    """Start, follow, answer, resume or cancel a run on Temporal; the exit code as for a local run."""
    from strands_durable.temporal.engine import require_temporal

    try:
        require_temporal()
        if not flags.address:
            raise UsageError("--engine temporal needs --temporal HOST:PORT (the Temporal server)")
        sessions_dir = request.sessions_dir or os.environ.get("STRANDS_SESSIONS_DIR")
        if not sessions_dir:
            raise UsageError("--engine temporal needs --sessions-dir (the store the workers share, e.g. s3://...)")
        return asyncio.run(_drive(request, flags, sessions_dir))
    except DurableError as exc:
        fail(exc)
    except KeyboardInterrupt:
        return int(ExitCode.OK)  # _drive printed how to follow; a second Ctrl+C lands here
    return int(ExitCode.OK)


async def _drive(request: Any, flags: EngineFlags, sessions_dir: str) -> int:
    from strands_durable.store import open_store
    from strands_durable.temporal import engine

    client = await engine.connect(flags.address or "", flags.namespace)
    store = open_store(sessions_dir)
    if flags.cancel_id is not None:
        session_id = store.resolve(flags.cancel_id)
        await _check_cancellable(client, store, session_id)
        await engine.cancel(client, session_id)
        print(f"Cancel requested for run {session_id}: it stops at its next safe point")
        return int(ExitCode.OK)
    if request.resume_id is not None:
        session_id = store.resolve(request.resume_id)
        handle = await _resumed(client, store, session_id, sessions_dir, request, flags)
    else:
        session_id, limits = _create(request, flags, store)
        handle = await engine.start_run(client, session_id, sessions_dir, task_queue=flags.task_queue, limits=limits)
        print(f"Started run {session_id} on Temporal at {flags.address} (task queue {flags.task_queue})")
    if flags.detach:
        print(_how_to_follow(request, flags, session_id, sessions_dir))
        return int(ExitCode.OK)
    try:
        return await _follow(handle, store, session_id, request, flags, sessions_dir)
    except (KeyboardInterrupt, asyncio.CancelledError):
        print(f"\nDetached: the run goes on. {_how_to_follow(request, flags, session_id, sessions_dir)}")
        return int(ExitCode.OK)


async def _check_cancellable(client: Any, store: Any, session_id: str) -> None:
    """A usage error (exit 2) unless the session's run is running on Temporal: one that already ended (completed,
    failed, cancelled) has nothing to stop, and saying "it stops at its next safe point" would be untrue."""
    from temporalio.client import WorkflowExecutionStatus
    from temporalio.service import RPCError

    try:
        description = await client.get_workflow_handle(session_id).describe()
    except RPCError as exc:
        raise UsageError(f"Session {session_id} has no run on this Temporal server: {exc}") from None
    status = description.status
    if status != WorkflowExecutionStatus.RUNNING:
        ended = status.name.lower() if status is not None else "unknown"
        raise UsageError(
            f"Run {session_id} already finished on Temporal ({ended}; session {store.load(session_id).status}): "
            "nothing to cancel"
        )


def _create(request: Any, flags: EngineFlags, store: Any) -> tuple[str, Any]:
    """Create the session here (spec snapshot, variables, choices), exactly as a local run would, then let go.
    Its engine record keeps where the run lives and its activity limits (from the spec and the environment)."""
    from dataclasses import asdict

    from strands_durable.cli.run_request import run_options
    from strands_durable.runner.run import create_run
    from strands_durable.spec import load_spec
    from strands_durable.temporal.engine import activity_limits

    options = run_options(request)
    limits = activity_limits(load_spec(request.spec).runtime)
    engine = {"name": "temporal", "address": flags.address or "", "namespace": flags.namespace}
    engine.update(task_queue=flags.task_queue, **asdict(limits))
    _, session, _ = create_run(request.spec, options, store=store, engine=engine)
    session_id = session.state.session_id
    session.close()
    return session_id, limits


async def _resumed(
    client: Any, store: Any, session_id: str, sessions_dir: str, request: Any, flags: EngineFlags
) -> Any:
    """Follow a live run (answering it with --hitl-response), or start a new attempt of a failed one."""
    from temporalio.client import WorkflowExecutionStatus

    from strands_durable.errors import SessionCompleted
    from strands_durable.temporal import engine
    from strands_durable.temporal.payloads import StepResult

    handle = client.get_workflow_handle(session_id, result_type=StepResult)
    description = await handle.describe()
    status = description.status
    if status == WorkflowExecutionStatus.RUNNING:
        if request.hitl_response is not None:
            await engine.answer(client, session_id, request.hitl_response)
            print(f"Answer sent to run {session_id}")
        return handle
    if status == WorkflowExecutionStatus.COMPLETED and store.load(session_id).status == "completed":
        raise SessionCompleted(session_id)
    if status in (WorkflowExecutionStatus.CANCELED, WorkflowExecutionStatus.TERMINATED):
        raise UsageError(f"Run {session_id} was cancelled on Temporal: start a new run of its spec instead")
    state = store.load(session_id)
    print(f"Starting a new attempt of run {session_id} (the last one ended {state.status})")
    recorded = state.meta.get("engine") or {}  # the run's own queue, whatever this command says
    new = await engine.start_run(
        client,
        session_id,
        sessions_dir,
        task_queue=recorded.get("task_queue") or flags.task_queue,
        limits=engine.ActivityLimits.recorded(recorded),  # the limits the run was started with
    )
    if request.hitl_response is not None:
        await engine.answer(client, session_id, request.hitl_response)
    return new


async def _follow(handle: Any, store: Any, session_id: str, request: Any, flags: EngineFlags, sessions_dir: str) -> int:
    """Print each unit as it is committed until the workflow ends; exit as a local run would."""
    from strands_durable.temporal.payloads import StepResult
    from strands_durable.temporal.workflow import PAUSED

    seen: set[str] = set()
    result_task = asyncio.ensure_future(handle.result())
    started = time.monotonic()
    while True:
        done, _ = await asyncio.wait({result_task}, timeout=FOLLOW_POLL_S)
        _print_new_units(store, session_id, seen)
        if done:
            break
        if await _status(handle) == PAUSED:  # the run waits for a human: say how to answer, as locally
            result_task.cancel()
            return _waiting_for_human(store, session_id, _command(request, flags, session_id, sessions_dir))
    result: StepResult = result_task.result()
    elapsed = time.monotonic() - started
    if result.status == "completed":
        state = store.load(session_id)
        usage = state.usage()
        print(f"✓ Run {session_id} completed on Temporal in {elapsed:.1f}s ({usage['total']} tokens)")
        return int(ExitCode.OK)
    if result.status == "failed":
        print(f"✗ Run {session_id} failed: {result.reason}", file=sys.stderr)
        print(f"Start a new attempt with: {_command(request, flags, session_id, sessions_dir)}", file=sys.stderr)
        return result.exit_code or int(ExitCode.RUNTIME)
    print(f"Run {session_id} ended {result.status}: {result.reason}", file=sys.stderr)
    return result.exit_code or int(ExitCode.OK)


async def _status(handle: Any) -> str | None:
    """The workflow's own status, or None while no worker answers (none polling yet, one just died): a query is
    answered by a worker, and following must outlast workers coming and going."""
    from temporalio.service import RPCError

    try:
        return await asyncio.wait_for(handle.query("status"), STATUS_QUERY_TIMEOUT_S)
    except (RPCError, asyncio.TimeoutError):
        return None


def _print_new_units(store: Any, session_id: str, seen: set[str]) -> None:
    try:
        state = store.load(session_id)
    except DurableError:
        return
    for unit, record in state.units.items():
        if unit not in seen and record.get("status") == "completed":
            seen.add(unit)
            print(f"✓ {unit} completed", flush=True)


def _waiting_for_human(store: Any, session_id: str, resume: str) -> int:
    """A run on Temporal that waits for an answer: the prompt, and the command that sends one (exit 19)."""
    pending = dict(store.load(session_id).pattern_state.get("pending_hitl") or {})
    print("⏸ Paused for human input" + (f" at {pending['unit']}" if pending.get("unit") else ""))
    if pending.get("prompt"):
        print(f"Prompt: {pending['prompt']}")
    if pending.get("context"):
        print(f"Context:\n{pending['context']}")
    if pending.get("default") is not None:
        print(f"Default answer: {pending['default']}")
    print(f'The run waits on Temporal. Answer with: {resume} --hitl-response "<your answer>"')
    return int(ExitCode.HITL_PAUSED)


def _command(request: Any, flags: EngineFlags, session_id: str, sessions_dir: str) -> str:
    from strands_durable.cli.run_request import program_name

    parts = [program_name(), "run", "--resume", session_id, "--engine", "temporal", "--temporal", flags.address or ""]
    if flags.namespace != "default":
        parts += ["--namespace", flags.namespace]
    parts += ["--sessions-dir", sessions_dir]
    return " ".join(shlex.quote(part) for part in parts)


def _how_to_follow(request: Any, flags: EngineFlags, session_id: str, sessions_dir: str) -> str:
    follow = _command(request, flags, session_id, sessions_dir)
    cancel = follow.replace(f"--resume {session_id}", f"--cancel {session_id}")
    return f"Follow it with: {follow}\nCancel it with: {cancel}"
