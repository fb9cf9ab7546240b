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
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from strands_durable.errors import TemporalUnreachable, Unsupported, UsageError
from strands_durable.temporal import DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE, HITL_SIGNAL, WORKFLOW_NAME, location
from strands_durable.temporal.payloads import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_PLAN_TIMEOUT_S,
    DEFAULT_UNIT_TIMEOUT_S,
    RunInput,
    StepResult,
)

if TYPE_CHECKING:
    from strands_durable.crashpoints import CrashPoints

CONNECT_TIMEOUT_S = 10.0
HEARTBEAT_ENV = "STRANDS_TEMPORAL_HEARTBEAT_TIMEOUT"
DEFAULT_HEARTBEAT_TIMEOUT_S = 20.0
UNIT_TIMEOUT_ENV = "STRANDS_TEMPORAL_UNIT_TIMEOUT"
PLAN_TIMEOUT_ENV = "STRANDS_TEMPORAL_PLAN_TIMEOUT"
MAX_ATTEMPTS_ENV = "STRANDS_TEMPORAL_MAX_ATTEMPTS"
BUDGET_GRACE_S = 60.0  # past runtime.budgets.max_duration_s the runner stops at its next check; one call may run on


@dataclass(frozen=True)
class ActivityLimits:
    """How long one attempt of a unit or a plan pass may take before Temporal abandons and retries it, and how
    many attempts an activity gets. They travel in the workflow's input and the session's engine record."""

    unit_timeout_s: float = DEFAULT_UNIT_TIMEOUT_S
    plan_timeout_s: float = DEFAULT_PLAN_TIMEOUT_S
    max_attempts: int = DEFAULT_MAX_ATTEMPTS

    @classmethod
    def recorded(cls, engine: dict[str, Any]) -> ActivityLimits:
        """The limits a session's engine record holds (the defaults for runs started before they were kept)."""
        names = [f.name for f in fields(cls)]
        return cls(**{name: engine[name] for name in names if engine.get(name) is not None})


def activity_limits(runtime: Any | None = None) -> ActivityLimits:
    """A new run's limits: $STRANDS_TEMPORAL_UNIT_TIMEOUT / _PLAN_TIMEOUT (seconds) / _MAX_ATTEMPTS when set;
    else a unit attempt may take the spec's `runtime.budgets.max_duration_s` plus 60 s (the runner ends a run
    over its time budget at its next check, so an attempt still going past that is hung: abandon and retry it
    from the journal), capped at 2 h. `failure_policy` is not mapped: model-call retries stay inside the unit
    (the runner's), so the two retry layers never multiply."""
    budget = getattr(getattr(runtime, "budgets", None), "max_duration_s", None)
    unit_default = min(DEFAULT_UNIT_TIMEOUT_S, float(budget) + BUDGET_GRACE_S) if budget else DEFAULT_UNIT_TIMEOUT_S
    return ActivityLimits(
        unit_timeout_s=_seconds_env(UNIT_TIMEOUT_ENV, unit_default, minimum=1),
        plan_timeout_s=_seconds_env(PLAN_TIMEOUT_ENV, DEFAULT_PLAN_TIMEOUT_S, minimum=1),
        max_attempts=int(_seconds_env(MAX_ATTEMPTS_ENV, DEFAULT_MAX_ATTEMPTS, minimum=1, what="a whole number")),
    )


def _seconds_env(name: str, default: float, *, minimum: float, what: str = "a number of seconds") -> float:
    """$`name` as a number of at least `minimum`, `default` when unset; UsageError (exit 2) naming it otherwise."""
    value = os.environ.get(name, "")
    try:
        number = float(value) if value.strip() else default
    except ValueError:
        raise UsageError(f"{name} must be {what}, not {value!r}") from None
    if number < minimum or (what == "a whole number" and number != int(number)):
        raise UsageError(f"{name} must be {what} of at least {minimum:g}, not {value!r}")
    return number


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
    limits: ActivityLimits | None = None,
) -> Any:
    """Start the workflow of a session created with runner.run.create_run; returns its handle."""
    limits = limits or ActivityLimits()
    return await client.start_workflow(
        WORKFLOW_NAME,
        RunInput(
            session_id,
            location(sessions_dir),
            hitl_use_defaults,
            heartbeat_timeout_s(),
            unit_timeout_s=limits.unit_timeout_s,
            plan_timeout_s=limits.plan_timeout_s,
            max_attempts=limits.max_attempts,
        ),
        id=session_id,
        task_queue=task_queue,
        result_type=StepResult,
    )


def heartbeat_timeout_s() -> float:
    """How long a unit attempt may be silent before Temporal retries it: $STRANDS_TEMPORAL_HEARTBEAT_TIMEOUT
    seconds, default 20, at least 4 (workers heartbeat every 2 s)."""
    return _seconds_env(HEARTBEAT_ENV, DEFAULT_HEARTBEAT_TIMEOUT_S, minimum=4)


async def answer(client: Any, session_id: str, text: str) -> None:
    await client.get_workflow_handle(session_id).signal(HITL_SIGNAL, text)


async def cancel(client: Any, session_id: str) -> None:
    await client.get_workflow_handle(session_id).cancel()
