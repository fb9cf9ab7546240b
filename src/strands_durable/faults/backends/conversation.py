"""The built-in conversation every backend is put through: a tool-using agent over three prompts, on a scripted
model, with tools called concurrently (the SDK's default executor) and one non-idempotent tool (`pay`). Each tool
body notes its start and end in the run's workspace (`executions.jsonl`, appended with a write each, so a killed
process's notes stay), which is how the gate counts executions across processes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_durable.faults.kit.scratch import write_scratch
from strands_durable.store.fileops import FileOps

_SCRATCH = FileOps()  # the harness's own notes: not session data, no fsync

PROMPTS = ("Record the taxi and the hotel.", "Pay the dinner, record the museum.", "What is the total?")
SCRIPT: list[Any] = [
    [
        {"name": "add_expense", "input": {"item": "taxi", "amount": 12}},
        {"name": "add_expense", "input": {"item": "hotel", "amount": 140}},
    ],
    "Recorded the taxi and the hotel.",
    [
        {"name": "pay", "input": {"item": "dinner", "amount": 35}},
        {"name": "add_expense", "input": {"item": "museum", "amount": 15}},
        {"name": "lookup_rate", "input": {"currency": "EUR"}},
    ],
    [{"name": "total_expenses", "input": {}}],
    "Paid the dinner and recorded the museum.",
    [{"name": "total_expenses", "input": {}}],
    "The total is 202.",
]
NON_IDEMPOTENT = frozenset({"pay"})
AWAITS = 10  # event-loop turns a tool body yields, as one awaiting I/O: a batch's calls overlap, the same way each run
EXECUTIONS = "executions.jsonl"


def note(workspace: Path, record: dict[str, Any]) -> None:
    handle = _SCRATCH.open_append(workspace / EXECUTIONS)
    try:
        handle.append((json.dumps(record) + "\n").encode())
    finally:
        handle.close()


def executions(workspace: Path) -> list[dict[str, Any]]:
    """The notes of every tool body that started or ended in runs on this workspace, in order."""
    path = workspace / EXECUTIONS
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@dataclass
class Where:
    """The run the tools are working for (set per run: the tools themselves are made once, in the warm parent)."""

    workspace: Path = Path()
    phase: str = ""


CURRENT = Where()
_TOOLS: list[Any] = []


def tools() -> list[Any]:
    """The conversation's tools, decorated once per process (a forked child inherits them warm)."""
    if not _TOOLS:
        _TOOLS.extend(_make_tools())
    return _TOOLS


def _make_tools() -> list[Any]:
    import asyncio

    from strands import tool

    from strands_durable.runner.marks import non_idempotent

    async def body(tool_use_id: str, name: str) -> None:
        note(CURRENT.workspace, {"id": tool_use_id, "tool": name, "event": "start", "phase": CURRENT.phase})
        for _ in range(AWAITS):
            await asyncio.sleep(0)
        note(CURRENT.workspace, {"id": tool_use_id, "tool": name, "event": "end", "phase": CURRENT.phase})

    @tool(context=True)
    async def add_expense(item: str, amount: float, tool_context: Any) -> str:
        """Record one expense."""
        await body(tool_context.tool_use["toolUseId"], "add_expense")
        data = json.dumps({"item": item, "amount": amount}).encode()
        write_scratch(CURRENT.workspace / "expenses" / f"{item}.json", data)
        return f"recorded {item}: {amount}"

    @non_idempotent
    @tool(context=True)
    async def pay(item: str, amount: float, tool_context: Any) -> str:
        """Pay for an item (not safe to repeat)."""
        await body(tool_context.tool_use["toolUseId"], "pay")
        return f"paid {item}: {amount}"

    @tool(context=True)
    async def lookup_rate(currency: str, tool_context: Any) -> str:
        """Look up an exchange rate."""
        await body(tool_context.tool_use["toolUseId"], "lookup_rate")
        return f"1 {currency} = 1.0"

    @tool(context=True)
    async def total_expenses(tool_context: Any) -> str:
        """Sum the recorded expenses."""
        await body(tool_context.tool_use["toolUseId"], "total_expenses")
        return "202"

    return [add_expense, pay, lookup_rate, total_expenses]


def agent(session_manager: Any, workspace: Path, phase: str) -> Any:
    """The conversation's agent on `session_manager`."""
    from strands import Agent

    from strands_durable.models.scripted import ScriptedModel

    _SCRATCH.makedirs(workspace, durable=False)
    CURRENT.workspace, CURRENT.phase = workspace, phase  # one run at a time per process
    return Agent(
        agent_id="gate-agent",
        model=ScriptedModel(SCRIPT),
        tools=tools(),
        system_prompt="You record and pay expenses.",
        callback_handler=None,
        session_manager=session_manager,
    )
