"""Helpers for the plugin's self-tests: an example spec in a pytester directory, the summary line, mutations."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
RESEARCH = EXAMPLES / "chain-research.strands.yaml"
RELEASE_PLAN = EXAMPLES / "workflow-release-plan.strands.yaml"  # its planner's file_write is non-idempotent
SUMMARY = re.compile(
    r"^strands-chaos: (?P<points>\d+) crash points explored in (?P<workflows>\d+) workflows "
    r"\((?P<sites>\d+) site kinds\), (?P<divergences>\d+) divergences, (?P<invalid>\d+) invalid histories, "
    r"seed (?P<seed>\d+)$",
    re.MULTILINE,
)


def summary(result: pytest.RunResult) -> dict[str, int]:
    found = SUMMARY.search(result.stdout.str())
    assert found, result.stdout.str()[-3000:]
    return {key: int(value) for key, value in found.groupdict().items()}


def add_research_spec(pytester: pytest.Pytester, name: str = "research.strands.yaml", source: Path = RESEARCH) -> Path:
    path = pytester.path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source.read_text())
    return path


# Each mutation is a conftest for the inner session: a bug planted in the product (not a fault seam), applied
# when the inner session configures and never undone (the inner session runs in its own process).
MUTATIONS = {
    "store_forgets_last_commit": """
from strands_durable.store import local
from strands_durable.store.journal import JournalContents

_real = local.read_journal

def _forgetful(path, data, *, first_seq=0):
    contents = _real(path, data, first_seq=first_seq)
    if not contents.records or first_seq + len(contents.records) <= 2:
        return contents
    last_start = data.rstrip(b"\\n").rfind(b"\\n") + 1  # the last record never reached the disk
    return JournalContents(contents.records[:-1], last_start, torn_tail=True)

local.read_journal = _forgetful
""",
    "runner_reruns_committed_tools": """
from strands_durable.agent import durable

_real = durable._InvocationHooks.execute_tool

async def _forgets_results(self, context, next_fn):
    conv = self.conv
    if conv is not None:
        conv.tool_results.pop(context.tool_use["toolUseId"], None)  # as if the journal were never read
    async for item in _real(self, context, next_fn):
        yield item

durable._InvocationHooks.execute_tool = _forgets_results
""",
    "runner_reruns_non_idempotent_tools": """
from strands_durable.agent import durable

_real = durable._InvocationHooks.execute_tool

async def _forgets_started(self, context, next_fn):
    conv = self.conv
    if conv is not None:
        conv.tools_started.discard(context.tool_use["toolUseId"])  # "outcome unknown" is never answered
    async for item in _real(self, context, next_fn):
        yield item

durable._InvocationHooks.execute_tool = _forgets_started
""",
    "orphan_tool_use_after_resume": """
from strands_durable.agent import durable

_real_build = durable.DurableInvoker._build_agent
_real_added = durable._InvocationHooks.message_added

def _build(self, inv, conv, **kwargs):
    self.mutant_resumed = bool(durable.unit_messages(conv, inv.unit))
    return _real_build(self, inv, conv, **kwargs)

def _added(self, event):
    results = any("toolResult" in block for block in event.message.get("content", ()))
    if results and getattr(self.invoker, "mutant_resumed", False):
        return  # a resumed unit drops its results message: the toolUse before it is left without results
    return _real_added(self, event)

durable.DurableInvoker._build_agent = _build
durable._InvocationHooks.message_added = _added
""",
    "memory_only_state_two_units_later": """
import weakref

from strands_durable.runner.patterns import chain

_real = chain.run_agent_unit
_seen = weakref.WeakKeyDictionary()  # session of a run -> responses this process produced: kept only in memory

def _remembering(ctx, ref, **kwargs):
    seen = _seen.setdefault(ctx.session, {})
    steps = kwargs["template_ctx"].get("steps") or []
    for entry in steps[:-1]:  # every step older than the previous one is read from memory, not the session
        entry["response"] = seen.get(entry["index"], "")
    response = _real(ctx, ref, **kwargs)
    seen[ref.index] = response
    return response

chain.run_agent_unit = _remembering
""",
}
