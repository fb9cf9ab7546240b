"""The workflow: loop on the runner's plan until the run ends; each ready unit is its own activity.

Deterministic by construction: it only calls activities, waits for signals and keeps a list of answers. Units
that are ready together run as concurrent activities. A pause for a human waits for the `hitl_response`
signal; the answer goes to the next plan pass, which commits it as the HITL unit's outcome.

Changes across releases are versioned with `workflow.patched`: a run started by an earlier release replays its
history on today's code and keeps that release's commands to its end (Temporal memoizes the decision per run);
tests/temporal/histories holds recorded runs of every release, tests/temporal/workflow_v*.py the frozen old code.
- `progress-memo` (release 2): the run's progress (`running step[1]`, `paused for a human`, units done) is kept
  in the workflow's memo, which `temporal workflow describe` and `strands sessions show` read from the server
  with no worker running (a query needs one).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from strands_durable.temporal import HITL_SIGNAL, STEP_ACTIVITY, WORKFLOW_NAME
from strands_durable.temporal.payloads import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_PLAN_TIMEOUT_S,
    DEFAULT_UNIT_TIMEOUT_S,
    RunInput,
    StepInput,
    StepResult,
)

PAUSED = "paused for a human"
PROGRESS_PATCH = "progress-memo"
PROGRESS_MEMO = "progress"  # memo key: {"status": "running step[1]", "units_done": 3}
UNIT_TIMEOUT = timedelta(seconds=DEFAULT_UNIT_TIMEOUT_S)
PLAN_TIMEOUT = timedelta(seconds=DEFAULT_PLAN_TIMEOUT_S)
RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=DEFAULT_MAX_ATTEMPTS,  # attempts that died or found the session busy; failures are results
)


@workflow.defn(name=WORKFLOW_NAME)
class DurableRun:
    def __init__(self) -> None:
        self._answers: list[str] = []
        self._status = "starting"
        self._progress = False  # release 2's progress memo: only in runs this release started
        self._units_done = 0

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
            self._report("cancelled")
            await workflow.execute_activity(
                STEP_ACTIVITY,
                StepInput(run.session_id, run.sessions_dir, stop=True),
                result_type=StepResult,
                start_to_close_timeout=_plan_timeout(run),
                retry_policy=_retry(run),
                cancellation_type=workflow.ActivityCancellationType.ABANDON,
                summary="stop",
            )
            raise

    async def _loop(self, run: RunInput) -> StepResult:
        self._progress = workflow.patched(PROGRESS_PATCH)
        answer: str | None = None
        while True:
            self._status = "planning"
            plan = await self._step(run, None, answer, _plan_timeout(run))
            answer = None
            if plan.status == "ready":
                self._report("running " + ", ".join(plan.ready))
                done = await asyncio.gather(*(self._step(run, unit, None, _unit_timeout(run)) for unit in plan.ready))
                self._units_done += len(done)
                ended = [result for result in done if result.status in ("failed", "cancelled")]
                if ended:  # a unit's failure is committed; planning again would retry it for ever
                    self._report(ended[0].status)
                    return ended[0]
                continue
            if plan.status == "paused":
                self._report(PAUSED)
                await workflow.wait_condition(lambda: bool(self._answers))
                answer = self._answers.pop(0)
                continue
            self._report(plan.status)
            return plan

    def _report(self, status: str) -> None:
        """The loop's status for the `status` query, and (release 2) in the memo the server shows without a
        worker. Transient states (planning) stay out of the memo: each memo change is a history event."""
        self._status = status
        if self._progress:
            workflow.upsert_memo({PROGRESS_MEMO: {"status": status, "units_done": self._units_done}})

    async def _step(self, run: RunInput, unit: str | None, answer: str | None, timeout: timedelta) -> StepResult:
        return await workflow.execute_activity(
            STEP_ACTIVITY,
            StepInput(run.session_id, run.sessions_dir, unit, answer, run.hitl_use_defaults),
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            result_type=StepResult,
            start_to_close_timeout=timeout,
            heartbeat_timeout=timedelta(seconds=run.heartbeat_timeout_s),
            retry_policy=_retry(run),
            summary=f"unit {unit}" if unit else "plan",
        )


# The activity limits a run was started with (engine.activity_limits: the spec's time budget, environment
# overrides); a run started before they travelled in the input gets the constants above, so its commands are
# the ones its release gave. Timeouts and retry policies are attributes of a command, which replay does not
# compare; an older release's worker reading a newer run's input ignores the fields it does not know.


def _unit_timeout(run: RunInput) -> timedelta:
    return timedelta(seconds=run.unit_timeout_s) if run.unit_timeout_s else UNIT_TIMEOUT


def _plan_timeout(run: RunInput) -> timedelta:
    return timedelta(seconds=run.plan_timeout_s) if run.plan_timeout_s else PLAN_TIMEOUT


def _retry(run: RunInput) -> RetryPolicy:
    return replace(RETRY, maximum_attempts=run.max_attempts) if run.max_attempts else RETRY
