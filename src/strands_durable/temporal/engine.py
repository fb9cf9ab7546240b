"""The client side of runs on Temporal: connect, run a worker, start a run, follow it, answer it, cancel it.

A run's workflow id is its session id. Starting one creates the session in the shared store first (spec
snapshot, variables, runtime choices: exactly what a local run records), so every worker reads the same spec.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from strands_durable.errors import TemporalUnreachable, Unsupported, UsageError
from strands_durable.temporal import DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE, HITL_SIGNAL, WORKFLOW_NAME, location
from strands_durable.temporal.payloads import RunInput, StepResult

if TYPE_CHECKING:
    from strands_durable.crashpoints import CrashPoints

CONNECT_TIMEOUT_S = 10.0
HEARTBEAT_ENV = "STRANDS_TEMPORAL_HEARTBEAT_TIMEOUT"
DEFAULT_HEARTBEAT_TIMEOUT_S = 20.0


def require_temporal() -> None:
    """Exit 18 naming the extra when the temporalio package is not installed."""
    try:
        import temporalio  # noqa: F401
    except ImportError:
        raise Unsupported(
            "running on Temporal needs the temporal extra: pip install 'strands-durable[temporal]'"
        ) from None


async def connect(address: str, namespace: str = DEFAULT_NAMESPACE) -> Any:
    """A Temporal client for `address`, or TemporalUnreachable naming it."""
    require_temporal()
    from temporalio.client import Client

    try:
        return await asyncio.wait_for(Client.connect(address, namespace=namespace), CONNECT_TIMEOUT_S)
    except (OSError, RuntimeError, asyncio.TimeoutError) as exc:
        raise TemporalUnreachable(address, namespace, _reason(exc)) from None


def _reason(exc: BaseException) -> str:
    """The useful words of a connection failure: the OS's message inside the Rust client's error text."""
    text = str(exc)
    found = re.findall(r'message: "([^"]+)"', text)
    if found:
        return found[-1]
    return (text.splitlines()[0][:200] if text else "") or type(exc).__name__


async def run_worker(
    address: str,
    sessions_dir: str,
    *,
    namespace: str = DEFAULT_NAMESPACE,
    task_queue: str = DEFAULT_TASK_QUEUE,
    max_concurrent_units: int = 4,
    ready: Callable[[], None] | None = None,
    workflow: type | None = None,
    crash_points: Callable[[], CrashPoints] | None = None,
) -> None:
    """Serve runs until cancelled: the workflow and the step activity, units in a thread pool.

    `workflow` replaces today's workflow definition (tests serve a frozen earlier release with it);
    `crash_points` makes each unit attempt's crash-point bus, for observers of its model calls and tools."""
    from temporalio.worker import Worker

    from strands_durable.temporal.activities import StepActivities
    from strands_durable.temporal.workflow import DurableRun

    client = await connect(address, namespace)
    with ThreadPoolExecutor(max_workers=max_concurrent_units, thread_name_prefix="strands-activity") as pool:
        worker = Worker(
            client,
            task_queue=task_queue,
            workflows=[workflow or DurableRun],
            activities=[StepActivities(sessions_dir, crash_points).run_step],
            activity_executor=pool,
            max_concurrent_activities=max_concurrent_units,
        )
        async with worker:
            if ready is not None:
                ready()
            await asyncio.Event().wait()


async def start_run(
    client: Any,
    session_id: str,
    sessions_dir: str,
    *,
    task_queue: str = DEFAULT_TASK_QUEUE,
    hitl_use_defaults: bool = False,
) -> Any:
    """Start the workflow of a session created with runner.run.create_run; returns its handle."""
    return await client.start_workflow(
        WORKFLOW_NAME,
        RunInput(session_id, location(sessions_dir), hitl_use_defaults, heartbeat_timeout_s()),
        id=session_id,
        task_queue=task_queue,
        result_type=StepResult,
    )


def heartbeat_timeout_s() -> float:
    """How long a unit attempt may be silent before Temporal retries it: $STRANDS_TEMPORAL_HEARTBEAT_TIMEOUT
    seconds, default 20 (workers heartbeat every 2 s)."""
    value = os.environ.get(HEARTBEAT_ENV, "")
    try:
        seconds = float(value) if value.strip() else DEFAULT_HEARTBEAT_TIMEOUT_S
    except ValueError:
        raise UsageError(f"{HEARTBEAT_ENV} must be a number of seconds, not {value!r}") from None
    if seconds < 4:
        raise UsageError(f"{HEARTBEAT_ENV} must be at least 4 seconds (workers heartbeat every 2 s)")
    return seconds


async def answer(client: Any, session_id: str, text: str) -> None:
    await client.get_workflow_handle(session_id).signal(HITL_SIGNAL, text)


async def cancel(client: Any, session_id: str) -> None:
    await client.get_workflow_handle(session_id).cancel()
