"""Test support for the durable core: tools that count their executions in an fsynced file, run helpers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from strands import tool

from strands_durable.faults.oracle import RequestLog, counting_model
from strands_durable.models.providers import build_model
from strands_durable.runner.context import RunOptions
from strands_durable.runner.native_tools import evaluate_arithmetic
from strands_durable.runner.tools import non_idempotent


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
