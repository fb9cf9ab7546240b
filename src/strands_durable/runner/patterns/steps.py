"""What the patterns share: running one step (agent or HITL), sequences of steps, and committing a unit with
the pattern's readable state (keeping a still-unanswered HITL question of a concurrent unit)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from strands_durable.runner.context import RunContext
from strands_durable.runner.units import UnitRef, complete_unit, completed, hitl_answer, run_agent_unit, skip_unit
from strands_durable.spec.patterns import HitlFields


def is_hitl(step: Any) -> bool:
    """A HITL pause (a step, task or node with `type: hitl`), asked of its model class: an agent step has no `type`,
    and pydantic answers a missing attribute through an exception (~3 us, paid per step a resume skips)."""
    return isinstance(step, HitlFields)


def label_of(step: Any) -> str:
    return "hitl" if is_hitl(step) else step.agent


def execute_step(
    ctx: RunContext,
    ref: UnitRef,
    step: Any,
    *,
    conv_key: Callable[[str], str],
    template_ctx: dict[str, Any],
    where: str,
    tool_names: list[str] | None = None,
    instruction: str | None = None,
) -> dict[str, Any]:
    """Run one step and return its record (not committed yet): `{"agent", "response"}` or a HITL answer."""
    if is_hitl(step):
        return {"type": "hitl", "agent": None, "response": hitl_answer(ctx, ref, step, template_ctx, where)}
    values = {**template_ctx, **(getattr(step, "vars", None) or {})}
    response = run_agent_unit(
        ctx,
        ref,
        agent_id=step.agent,
        conv_key=conv_key(step.agent),
        input_template=step.input,
        template_ctx=values,
        where=where,
        tool_names=tool_names if tool_names is not None else getattr(step, "tool_overrides", None),
        instruction=instruction,
    )
    return {"agent": step.agent, "response": response}


def commit_unit(ctx: RunContext, ref: UnitRef, record: dict[str, Any], build_state: Callable[[], dict]) -> None:
    """Commit a unit and the pattern state `build_state()` returns, atomically with respect to sibling units."""
    with ctx.lock:
        state = build_state()
        pending = ctx.state.pattern_state.get("pending_hitl")
        if pending and pending.get("unit") != ref.unit and completed(ctx, pending.get("unit", "")) is None:
            state = {**state, "pending_hitl": pending}
        # a human's answer exists nowhere else: it is fsynced; an agent's outcome is re-derived from its conversation
        complete_unit(ctx, ref, record, state, derived=record.get("type") != "hitl")


def step_view(entry: dict[str, Any]) -> dict[str, Any]:
    """What a template sees of a finished step (`steps[n]`): its response, index and agent, or `type: hitl`."""
    view = {"response": entry["response"], "agent": entry.get("agent"), "index": entry["index"]}
    if entry.get("type") == "hitl":
        view["type"] = "hitl"
    return view


def sequence_context(base: dict[str, Any], entries: list[dict[str, Any]]) -> dict[str, Any]:
    """`steps[n]`, `last_response` and `hitl_response` of a sequence of steps, over `base`."""
    steps = [step_view(e) for e in entries]
    hitl = [e["response"] for e in entries if e.get("type") == "hitl"]
    return {
        **base,
        "steps": steps,
        "last_response": steps[-1]["response"] if steps else base.get("last_response", ""),
        "hitl_response": hitl[-1] if hitl else base.get("hitl_response"),
    }


@dataclass(frozen=True)
class Sequence:
    """Where a sequence of steps sits: unit ids `<prefix>step[<n>]`, its spec key path, its conversations."""

    prefix: str  # "branch:web/" or "route:billing/"
    where: str  # "pattern.config.branches[0].steps"
    conv_key: Callable[[str], str]
    first_index: int = 0  # the reporter's index of the first step
    total: int | None = None


def run_sequence(
    ctx: RunContext,
    steps: list[Any],
    seq: Sequence,
    base: dict[str, Any],
    build_state: Callable[[list[dict[str, Any]]], dict[str, Any]],
    *,
    between: Callable[[], None] = lambda: None,
) -> list[dict[str, Any]]:
    """Run (or resume) steps one after another; each sees the earlier ones as `steps[n]`; returns the records.

    `build_state(records so far)` gives the pattern state committed with each step; `between` runs before each
    step that is not yet committed (a safe point for concurrent sequences).
    """
    entries: list[dict[str, Any]] = []
    for index, step in enumerate(steps):
        place = (("step", index),) if seq.prefix else ()  # a step inside a branch or route
        ref = UnitRef(f"{seq.prefix}step[{index}]", label_of(step), seq.first_index + index, seq.total, place)
        record = skip_unit(ctx, ref)
        if record is not None:
            entries.append({**_entry_of(record), "index": index})
            continue
        between()
        entry = execute_step(
            ctx,
            ref,
            step,
            conv_key=seq.conv_key,
            template_ctx=sequence_context(base, entries),
            where=f"{seq.where}[{index}]",
        )
        entry["index"] = index
        entries.append(entry)
        commit_unit(ctx, ref, entry, lambda: build_state(entries))
    return entries


def committed_steps(ctx: RunContext, steps: list[Any], prefix: str) -> list[dict[str, Any]]:
    """The records of a sequence's steps already committed (they are committed in order: a prefix), as
    `run_sequence` returns them."""
    entries = []
    for index in range(len(steps)):
        record = completed(ctx, f"{prefix}step[{index}]")
        if record is None:
            break
        entries.append({**_entry_of(record), "index": index})
    return entries


def run_single(
    ctx: RunContext,
    ref: UnitRef,
    step: Any,
    template_ctx: dict[str, Any],
    where: str,
    build_state: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    conv_key: Callable[[str], str] = lambda agent: agent,
) -> dict[str, Any]:
    """One committed step outside a sequence (reduce, writeup, a review): its record, run once."""
    record = skip_unit(ctx, ref)
    if record is not None:
        return _entry_of(record)
    entry = execute_step(ctx, ref, step, conv_key=conv_key, template_ctx=template_ctx, where=where)
    commit_unit(ctx, ref, entry, lambda: build_state(entry))
    return entry


def _entry_of(record: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in record.items() if key != "status"}
