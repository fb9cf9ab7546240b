"""Test support for the durable core: tools that count their executions in an fsynced file, and crashes driven
through the fault kit."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from strands import tool

from strands_durable import RunOptions, non_idempotent
from strands_durable.faults.classes.explore import explore_point
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.observe import crash_at as crash_at  # the pattern suites crash their own runs with it
from strands_durable.faults.kit.oracle import RequestLog, counting_model
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.models.providers import build_model
from strands_durable.runner.native_tools import evaluate_arithmetic


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


# -- crash at a point, resume in fresh objects, judge (shared by the core and the pattern suites): the fault kit's
# golden run and in-process explorer, with the counting tools -----------------------------------------------------


def golden_run(root: Path, spec: Path, **options: Any) -> WorkflowGoldenRun:
    """An uninterrupted run of `spec` through the fault kit (`faults.kit.runs.run_golden`), its tools counting their
    executions in `root/exec.log`; every resume of its explorations runs to the end (`full`). `seed` may be given."""
    log = ExecutionLog(root / "exec.log")
    target = ChaosTarget(spec, tools=counting_tools(log), seed=options.pop("seed", 0), full=True)
    golden = run_golden(target, root)
    assert not options, f"options the kit does not take: {sorted(options)}"
    assert not golden.problems, [str(p) for p in golden.problems]
    assert golden.comparable["status"] == "completed"
    assert all(count == 1 for count in log.counts().values())
    return golden


def crash_and_resume(golden: WorkflowGoldenRun, point_id: str, root: Path) -> list[str]:
    """Crash at `point_id`, resume in fresh objects and judge (`faults.classes.explore.explore_point`): the problems
    found (empty = pass), a point that never fired included."""
    outcome = explore_point(golden, point_id, root)
    problems = [str(p) for p in outcome.problems]
    if not outcome.explored:
        problems.append("[not-fired] the crash point was never reached")
    return problems


def analyst_follow_up(conv_key: str, **fields: Any) -> Any:
    """One more invocation of the chain spec's `analyst` on its restored conversation (`step[9]`, a unit the spec
    never ran): what the invoker tests run on a session an earlier run left."""
    from strands_durable.agent.durable import Invocation

    return Invocation(
        unit="step[9]",
        path="step[9]:analyst",
        conv_key=conv_key,
        agent_id="analyst",
        system_prompt=None,
        prompt="One more.",
        model=build_model("synthetic"),
        **fields,
    )
