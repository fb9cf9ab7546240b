"""The one activity: a plan pass or one unit of a session, run by the runner in plan mode on a worker.

It heartbeats from a side thread while the runner works (so a dead worker's attempt is noticed within the
heartbeat timeout and retried elsewhere), and a cancellation Temporal delivers through the heartbeat stops the
runner at its next safe point. Retryable failures (the session's lease held by a live attempt, storage I/O)
are raised so Temporal retries them; a run's own failure is a result.

A unit runs under its own unit lease where the store has them (S3: `open_unit`, fenced by Temporal's attempt
number), so sibling units run at the same time on different workers; elsewhere (local directories) every pass
holds the session's lease and siblings take turns.
"""

from __future__ import annotations

import contextvars
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from temporalio import activity

from strands_durable.temporal import STEP_ACTIVITY, location
from strands_durable.temporal.payloads import StepInput, StepResult

HEARTBEAT_EVERY_S = 2.0
BUSY_WAIT_S = 120.0
BUSY_POLL_S = 0.05
T = TypeVar("T")

if TYPE_CHECKING:
    from strands_durable.crashpoints import CrashPoints


class StepActivities:
    """The worker's activities, bound to the sessions directory it was started with (`--sessions-dir`), and an
    optional factory of the crash-point bus each attempt's run emits on (observers of model calls and tools)."""

    def __init__(self, sessions_dir: str, crash_points: Callable[[], CrashPoints] | None = None) -> None:
        self.sessions_dir = location(sessions_dir)
        self.crash_points = crash_points

    @activity.defn(name=STEP_ACTIVITY)
    def run_step(self, step: StepInput) -> StepResult:
        from temporalio.exceptions import ApplicationError

        from strands_durable.agent.durable import StopRequested
        from strands_durable.runner.options import RunOptions
        from strands_durable.runner.plan import mark_stopped, plan_step
        from strands_durable.store import open_store

        if location(step.sessions_dir) != self.sessions_dir:
            raise ApplicationError(  # a worker must never commit into another store than the run's
                f"this worker serves sessions in {self.sessions_dir}; run {step.session_id} lives in "
                f"{step.sessions_dir}",
                non_retryable=True,
            )
        cancelled = threading.Event()
        done = threading.Event()
        beat = threading.Thread(
            target=contextvars.copy_context().run,
            args=(_heartbeat, cancelled, done),
            name="strands-heartbeat",
            daemon=True,
        )
        beat.start()
        store = open_store(self.sessions_dir)
        passes = store
        if step.unit is not None and store.unit_leases:
            from strands_durable.store.wrapping import UnitStore

            passes = UnitStore(store, step.unit, activity.info().attempt)  # siblings run at once (S3)
        try:
            options = RunOptions(
                hitl_response=step.hitl_response,
                hitl_use_defaults=step.hitl_use_defaults,
                stop_requested=cancelled.is_set,
                crash_points=self.crash_points() if self.crash_points else None,
            )
            if step.stop:
                _when_free(lambda: mark_stopped(step.session_id, store=store), cancelled)
                return StepResult("cancelled", reason="stopped (the run was cancelled)")
            with activity.shield_thread_cancel_exception():  # cancellation is a stop request, never a thrown error
                try:
                    outcome = _when_free(
                        lambda: plan_step(step.session_id, options, store=passes, unit=step.unit), cancelled
                    )
                except StopRequested:
                    if step.unit is not None:  # a unit pass records no status (siblings may commit): this does
                        _when_free(lambda: mark_stopped(step.session_id, store=store), threading.Event())
                    return StepResult("cancelled", reason=f"{step.unit or 'plan'}: stopped at a safe point")
        finally:
            done.set()
            beat.join()
        reason = f"{outcome.reason} (on worker {os.getpid()}@{socket.gethostname()})" if outcome.reason else ""
        return StepResult(outcome.status, list(outcome.ready), reason, outcome.exit_code)


def _when_free(step: Callable[[], T], cancelled: threading.Event) -> T:
    """Run `step`, waiting while another pass holds the session: a sibling unit's attempt where units share the
    session's lease (they commit one at a time), a unit's attempt while a plan pass holds it (S3), or a plan pass
    while a unit's lease is live. Past `BUSY_WAIT_S` the attempt fails and Temporal's retry policy takes over."""
    from strands_durable.errors import SessionInUse

    deadline = time.monotonic() + BUSY_WAIT_S
    while True:
        try:
            return step()
        except SessionInUse:
            if cancelled.is_set() or time.monotonic() >= deadline:
                raise
            time.sleep(BUSY_POLL_S)


def _heartbeat(cancelled: threading.Event, done: threading.Event) -> None:
    while not done.wait(HEARTBEAT_EVERY_S):
        try:
            activity.heartbeat()
        except Exception:  # the worker is shutting down; the attempt ends with the process
            return
        if activity.is_cancelled():
            cancelled.set()
