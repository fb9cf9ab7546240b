"""The conversations the agent tables of the docs and the tests share.

- The expenses conversation: three prompts, seven tool calls in two parallel batches under the default
  `ConcurrentToolExecutor`, a scripted model. `expenses_agent(ctx, manager)` is its factory for the engine
  (faults/agents/engine.py): each expense is recorded as a file of the workspace (`expense_tools`, which the
  multi-agent scenarios of faults/agents/multiagent.py give their nodes too). `World`, `make_tools` and
  `make_model` give the same conversation to harnesses that keep their own files (a ledger line per tool execution
  and a line per model request, validated under the Bedrock profile): the power-cut harness
  (faults/agents/power.py) and the tests.
- The ledger conversation: two prompts, a non-idempotent `pay` that appends to the workspace's ledger and an
  idempotent `note`, called in parallel (`ledger_agent(ctx, manager)`).

`manager` is "durable" (ours), "sdk-file" (the SDK's `FileSessionManager`) or a subclass of
`DurableSessionManager` (the self-tests' planted bugs).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_durable.faults.agents.run import AgentContext, spans_overlap
from strands_durable.faults.kit.scratch import write_scratch
from strands_durable.store.fileops import FileOps

_SCRATCH = FileOps()  # the harness's own files (ledger, requests, copies): not session data, no fsync

SESSION_ID = "expenses-1"
PROMPTS = ("Record the taxi and the hotel.", "Now the dinner and the museum.", "What is the total?")
SCRIPT: list[Any] = [
    [
        {"name": "add_expense", "input": {"item": "taxi", "amount": 12}},
        {"name": "add_expense", "input": {"item": "hotel", "amount": 140}},
    ],
    "Recorded the taxi and the hotel.",
    [
        {"name": "add_expense", "input": {"item": "dinner", "amount": 35}},
        {"name": "add_expense", "input": {"item": "museum", "amount": 15}},
        {"name": "lookup_rate", "input": {"currency": "EUR"}},
    ],
    [{"name": "total_expenses", "input": {}}],
    "Recorded the dinner and the museum.",
    [{"name": "total_expenses", "input": {}}],
    "The total is 202.",
]
TOOL_SECONDS = 0.02  # long enough for parallel calls to overlap measurably
MANAGERS = ("durable", "sdk-file")


# -- the conversation's world: tools and a model that write what they did to files outside the session --------
@dataclass
class World:
    """Files recording what happened, shared by the golden run, the crashed child and the resumes."""

    root: Path

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    @property
    def ledger(self) -> Path:
        return self.root / "ledger.jsonl"  # one line per tool execution (its side effect)

    @property
    def requests(self) -> Path:
        return self.root / "requests.jsonl"  # one line per model request

    @property
    def final(self) -> Path:
        return self.root / "final.json"


def append_line(path: Path, record: dict[str, Any]) -> None:
    """One JSON line, appended through the file-operations layer (a killed process's append reaches the file)."""
    handle = _SCRATCH.open_append(path)
    try:
        handle.append((json.dumps(record) + "\n").encode())
    finally:
        handle.close()


def read_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def make_tools(world: World, phase: str) -> list[Any]:
    from strands import tool

    def effect(tool_use_id: str, name: str, detail: dict[str, Any]) -> None:
        start = time.monotonic()
        time.sleep(TOOL_SECONDS)
        append_line(
            world.ledger,
            {
                "id": tool_use_id,
                "tool": name,
                "detail": detail,
                "phase": phase,
                "start": start,
                "end": time.monotonic(),
            },
        )

    @tool(context=True)
    def add_expense(item: str, amount: float, tool_context: Any) -> str:
        """Record one expense."""
        effect(tool_context.tool_use["toolUseId"], "add_expense", {"item": item, "amount": amount})
        return f"recorded {item}: {amount}"

    @tool(context=True)
    def lookup_rate(currency: str, tool_context: Any) -> str:
        """Look up an exchange rate."""
        effect(tool_context.tool_use["toolUseId"], "lookup_rate", {"currency": currency})
        return f"1 {currency} = 1.0"

    @tool(context=True)
    def total_expenses(tool_context: Any) -> str:
        """Sum the recorded expenses."""
        effect(tool_context.tool_use["toolUseId"], "total_expenses", {})
        return "202"

    return [add_expense, lookup_rate, total_expenses]


def make_model(world: World, phase: str, script: list[Any] | None = None) -> Any:
    """The script, recording every request (normalised) with its validity under the Bedrock profile."""
    from strands_durable.history import validate
    from strands_durable.models.request import normalise_messages
    from strands_durable.models.scripted import ScriptedModel
    from strands_durable.models.wrapping import WrappedModel

    class RecordingModel(WrappedModel):
        async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kw: Any) -> Any:
            plain = normalise_messages(messages)
            violations = validate(plain, provider="bedrock", mode="request", tools_configured=bool(tool_specs))
            record = {"phase": phase, "messages": plain, "invalid": [v.rule for v in violations]}
            append_line(world.requests, record)
            async for event in super().stream(messages, tool_specs, system_prompt, **kw):
                yield event

    return RecordingModel(ScriptedModel(script or SCRIPT))


def overlapping(ledger: list[dict[str, Any]]) -> bool:
    """Whether two tool executions of a `World`'s ledger overlapped in time (tools really ran concurrently)."""
    return spans_overlap((line["start"], line["end"]) for line in ledger)


def warm_imports() -> None:
    """Import what the children use once, in the parent: each forked child then starts warm (~20 ms, not ~1 s)."""
    import strands.session.file_session_manager  # noqa: F401

    import strands_durable.history
    import strands_durable.models.scripted
    import strands_durable.models.wrapping
    import strands_durable.sdk  # noqa: F401


# -- the expenses conversation for the engine ---------------------------------------------------------------
def expense_tools(workspace: Path) -> list[Any]:
    """The expenses tools recording into `workspace`: each expense one file (writing it again, as an at-least-once
    re-run does, leaves the same workspace), the lookup and the total nothing. They are async and yield to the
    agent's event loop `AWAITS` times, as a tool awaiting I/O does, without a clock: a batch's calls overlap in time
    and every run interleaves them the same way (so the docs' table repeats exactly)."""
    from strands import tool

    @tool
    async def add_expense(item: str, amount: float) -> str:
        """Record one expense."""
        await awaiting()
        write_scratch(workspace / "expenses" / f"{item}.json", json.dumps({"item": item, "amount": amount}).encode())
        return f"recorded {item}: {amount}"

    @tool
    async def lookup_rate(currency: str) -> str:
        """Look up an exchange rate."""
        await awaiting()
        return f"1 {currency} = 1.0"

    @tool
    async def total_expenses() -> str:
        """Sum the recorded expenses."""
        await awaiting()
        return "202"

    return [add_expense, lookup_rate, total_expenses]


AWAITS = 10  # more than the event-loop turns between two calls of a batch starting


async def awaiting(turns: int = AWAITS) -> None:
    """Yield to the event loop `turns` times, as a tool awaiting I/O does, without a clock."""
    import asyncio

    for _ in range(turns):
        await asyncio.sleep(0)


def expenses_agent(ctx: AgentContext, manager: Any = "durable") -> Any:
    """The user's factory of the expenses conversation: a plain Agent with the default concurrent executor."""
    from strands import Agent

    from strands_durable.models.scripted import ScriptedModel

    return Agent(
        model=ScriptedModel(SCRIPT),
        tools=expense_tools(ctx.workspace),
        system_prompt="You record expenses.",
        callback_handler=None,
        session_manager=session_manager(ctx, manager),
    )


def session_manager(ctx: AgentContext, manager: Any) -> Any:
    """Ours ("durable", or a subclass of DurableSessionManager) or the SDK's FileSessionManager ("sdk-file")."""
    if manager == "sdk-file":
        from strands.session.file_session_manager import FileSessionManager

        return FileSessionManager(ctx.session_id, storage_dir=str(ctx.storage_dir))
    from strands_durable.sdk import DurableSessionManager

    manager_class = DurableSessionManager if manager == "durable" else manager
    return manager_class(ctx.session_id, ctx.storage_dir)


# -- the ledger conversation --------------------------------------------------------------------------------
LEDGER_SCRIPT: list[Any] = [
    [{"name": "pay", "input": {"item": "taxi", "amount": 12}}, {"name": "note", "input": {"item": "hotel"}}],
    "Paid the taxi, noted the hotel.",
    [{"name": "pay", "input": {"item": "dinner", "amount": 35}}],
    "Paid the dinner.",
]
LEDGER_PROMPTS = ("Pay the taxi, note the hotel.", "Now pay the dinner.")


def ledger_tools(ctx: AgentContext) -> list[Any]:
    """`pay` appends to the workspace's ledger (non-idempotent); `note` writes one file per item (idempotent). Both
    run on the agent's event loop (async tools), so every run interleaves a batch of them the same way."""
    from strands import tool

    from strands_durable.runner.marks import non_idempotent

    @non_idempotent
    @tool
    async def pay(item: str, amount: float) -> str:
        """Pay for an item."""
        append_line(ctx.workspace / "ledger.jsonl", {"item": item, "amount": amount})
        return f"paid {item}"

    @tool
    async def note(item: str) -> str:
        """Write a note about an item."""
        write_scratch(ctx.workspace / f"note-{item}.txt", item.encode())
        return f"noted {item}"

    return [pay, note]


def ledger_agent(ctx: AgentContext, manager: Any = "durable") -> Any:
    """The user's factory of the comparison: the ledger tools, a script, ours ("durable", or a subclass of
    DurableSessionManager: the self-tests' planted bugs) or the SDK's FileSessionManager ("sdk-file")."""
    from strands import Agent

    from strands_durable.models.scripted import ScriptedModel

    model = ScriptedModel(LEDGER_SCRIPT)
    return Agent(
        model=model, tools=ledger_tools(ctx), callback_handler=None, session_manager=session_manager(ctx, manager)
    )
