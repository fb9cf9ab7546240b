"""The workflow as the first Temporal release shipped it (main at ab65021), frozen for the live upgrade test.

A run starts on a worker serving this definition (same workflow name) and finishes on a worker serving today's
code (src/strands_durable/temporal/workflow.py). Do not edit: the next release that changes the workflow freezes
its own copy next to this one.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from strands_durable.temporal import HITL_SIGNAL, STEP_ACTIVITY, WORKFLOW_NAME
from strands_durable.temporal.payloads import RunInput, StepInput, StepResult

PAUSED = "paused for a human"
UNIT_TIMEOUT = timedelta(hours=2)  # one unit: a model turn plus tools, many of them
PLAN_TIMEOUT = timedelta(minutes=5)  # a plan pass replays committed units and runs none
RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=50,  # retries cover attempts that died or found the session busy; run failures are results
)


@workflow.defn(name=WORKFLOW_NAME)
class DurableRun:
    def __init__(self) -> None:
        self._answers: list[str] = []
        self._status = "starting"

    @workflow.signal(name=HITL_SIGNAL)
    def hitl_response(self, text: str) -> None:
        self._answers.append(text)

    @workflow.query
    def status(self) -> str:
        """`paused for a human` only while no answer is waiting to be used; else what the loop is doing."""
        if self._status == PAUSED and self._answers:
            return "answered"
        return self._status

    @workflow.run
    async def run(self, run: RunInput) -> StepResult:
        try:
            return await self._loop(run)
        except asyncio.CancelledError:  # `strands run --cancel`: units stopped at a safe point; say so, then end
            self._status = "cancelled"
            await workflow.execute_activity(
                STEP_ACTIVITY,
                StepInput(run.session_id, run.sessions_dir, stop=True),
                result_type=StepResult,
                start_to_close_timeout=PLAN_TIMEOUT,
                retry_policy=RETRY,
                cancellation_type=workflow.ActivityCancellationType.ABANDON,
                summary="stop",
            )
            raise

    async def _loop(self, run: RunInput) -> StepResult:
        answer: str | None = None
        while True:
            self._status = "planning"
            plan = await self._step(run, None, answer, PLAN_TIMEOUT)
            answer = None
            if plan.status == "ready":
                self._status = "running " + ", ".join(plan.ready)
                done = await asyncio.gather(*(self._step(run, unit, None, UNIT_TIMEOUT) for unit in plan.ready))
                ended = [result for result in done if result.status in ("failed", "cancelled")]
                if ended:  # a unit's failure is committed; planning again would retry it for ever
                    self._status = ended[0].status
                    return ended[0]
                continue
            if plan.status == "paused":
                self._status = PAUSED
                await workflow.wait_condition(lambda: bool(self._answers))
                answer = self._answers.pop(0)
                continue
            self._status = plan.status
            return plan

    async def _step(self, run: RunInput, unit: str | None, answer: str | None, timeout: timedelta) -> StepResult:
        return await workflow.execute_activity(
            STEP_ACTIVITY,
            StepInput(run.session_id, run.sessions_dir, unit, answer, run.hitl_use_defaults),
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            result_type=StepResult,
            start_to_close_timeout=timeout,
            heartbeat_timeout=timedelta(seconds=run.heartbeat_timeout_s),
            retry_policy=RETRY,
            summary=f"unit {unit}" if unit else "plan",
        )
