"""Test support for the durable core: tools that count their executions in an fsynced file, run helpers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from strands import tool

from strands_durable.crashpoints import CrashPoint, CrashPoints, InjectedCrash
from strands_durable.errors import DurableError
from strands_durable.faults.oracle import (
    RequestLog,
    committed_request_digests,
    comparable,
    counting_model,
    stored_violations,
    tool_ids_on_disk,
)
from strands_durable.models.providers import build_model
from strands_durable.runner.marks import non_idempotent
from strands_durable.runner.native_tools import evaluate_arithmetic
from strands_durable.runner.options import RunOptions
from strands_durable.runner.run import resume, run_workflow
from strands_durable.store import LocalStore


class ExecutionLog:
    """Appends one fsynced line per tool execution to a file outside the session directory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def record(self, tool_name: str, tool_use_id: str) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, (json.dumps({"tool": tool_name, "id": tool_use_id}) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def entries(self) -> list[dict[str, str]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines()]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for entry in self.entries():
            out[entry["id"]] = out.get(entry["id"], 0) + 1
        return out


def counting_tools(log: ExecutionLog, *, send_email_risky: bool = True) -> dict[str, Any]:
    @tool(context=True)
    def calculator(expression: str, tool_context: Any) -> str:
        """Evaluate an arithmetic expression.

        Args:
            expression: The arithmetic expression.
        """
        log.record("calculator", tool_context.tool_use["toolUseId"])
        try:
            return str(evaluate_arithmetic(expression))
        except (ValueError, ZeroDivisionError, SyntaxError) as exc:
            return f"error: {exc}"

    @tool(context=True)
    def current_time(timezone: str, tool_context: Any) -> str:
        """Return the time (fixed in tests).

        Args:
            timezone: The timezone name.
        """
        log.record("current_time", tool_context.tool_use["toolUseId"])
        return "2026-01-01T00:00:00+00:00"

    @tool(context=True)
    def send_email(to: str, body: str, tool_context: Any) -> str:
        """Send an email (a side effect that must not happen twice).

        Args:
            to: The recipient.
            body: The text.
        """
        log.record("send_email", tool_context.tool_use["toolUseId"])
        return f"sent to {to}"

    if send_email_risky:
        non_idempotent(send_email)
    return {"calculator": calculator, "current_time": current_time, "send_email": send_email}


def counted_options(log: ExecutionLog, requests: RequestLog, **kwargs: Any) -> RunOptions:
    def factory(*, agent_id: str, provider: str, model_id: Any, runtime: Any) -> Any:
        return counting_model(
            build_model(provider, model_id=model_id, runtime=runtime, seed=kwargs.get("seed", 0)), requests
        )

    return RunOptions(extra_tools=counting_tools(log), model_factory=factory, **kwargs)


# -- crash at a point, resume in fresh objects, judge (shared by the core and the pattern suites) ------------


def crash_at(target: str) -> CrashPoints:
    points = CrashPoints()
    fired = []

    def maybe_crash(point: CrashPoint) -> None:
        if point.id == target and not fired:
            fired.append(point)
            raise InjectedCrash(point)

    points.subscribe(maybe_crash)
    return points


def golden_run(root: Path, spec: Path, **options: Any) -> tuple[dict, list[str]]:
    """An uninterrupted run of `spec`: its comparable view and every crash-point id it passed, in order."""
    seen: list[str] = []
    points = CrashPoints()
    points.subscribe(lambda p: seen.append(p.id))
    log = ExecutionLog(root / "exec.log")
    store = LocalStore(root / "sessions", strict=True)
    outcome = run_workflow(
        spec, counted_options(log, RequestLog(), out_dir=root / "out", crash_points=points, **options), store=store
    )
    assert outcome.status == "completed"
    assert all(count == 1 for count in log.counts().values())
    return comparable(store.load(outcome.session_id)), seen


def crash_and_resume(root: Path, target: str, spec: Path, **options: Any) -> tuple[list[str], Any]:
    """Run with a crash at `target`, resume in fresh objects; the problems found (empty = pass) and the state."""
    import pytest

    problems: list[str] = []
    log = ExecutionLog(root / "exec.log")
    first_requests, resumed_requests = RequestLog(), RequestLog()
    store = LocalStore(root / "sessions", strict=True)
    with pytest.raises(InjectedCrash):
        run_workflow(
            spec,
            counted_options(log, first_requests, out_dir=root / "out", crash_points=crash_at(target), **options),
            store=store,
        )
    (session_id,) = store.session_ids()
    crashed = LocalStore(root / "sessions").load(session_id)
    problems += [f"invalid stored history after the crash: {v}" for v in stored_violations(crashed)]
    committed = committed_request_digests(crashed)
    committed_tools = tool_ids_on_disk(store.journal_path(session_id))
    executed_before = log.counts()
    if crashed.status != "completed":
        fresh = LocalStore(root / "sessions", strict=True)
        resume_options = {k: v for k, v in options.items() if k in ("hitl_use_defaults", "seed")}
        try:
            outcome = resume(session_id, counted_options(log, resumed_requests, **resume_options), store=fresh)
        except DurableError as exc:
            return [*problems, f"resume failed: {exc}"], crashed
        if outcome.status != "completed":
            problems.append(f"resume ended {outcome.status}")
    final = LocalStore(root / "sessions").load(session_id)
    problems += [f"invalid history after resume: {v}" for v in stored_violations(final, mode="stored")]
    redone = [d for d in resumed_requests.digests if d in committed]
    if redone:
        problems.append(f"{len(redone)} committed model turn(s) requested again")
    for tool_use_id, count in log.counts().items():
        # at-least-once: a tool that ran but whose result was not committed may run once more
        limit = 1 if tool_use_id in committed_tools or not executed_before.get(tool_use_id) else 2
        if count > limit:
            problems.append(
                f"tool call {tool_use_id} executed {count} times (committed: {tool_use_id in committed_tools})"
            )
    return problems, final
