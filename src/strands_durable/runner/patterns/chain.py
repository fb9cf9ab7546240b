"""chain: steps run one after another; each sees every earlier step's response; one conversation per agent."""

from __future__ import annotations

from typing import Any

from strands_durable.runner.context import RunContext
from strands_durable.runner.patterns.steps import is_hitl, label_of, step_view
from strands_durable.runner.units import (
    UnitRef,
    complete_unit,
    hitl_answer,
    run_agent_unit,
    skip_committed,
    skip_committed_prefix,
)


def run_chain(ctx: RunContext) -> dict[str, Any]:
    steps = ctx.spec.pattern.config.steps
    history: list[dict[str, Any]] = list(ctx.state.pattern_state.get("step_history", []))
    views = [step_view(entry) for entry in history]  # `steps[n]` of the templates: one view per entry, built once
    base = ctx.base_template_context()
    total = len(steps)
    # a resume reports each committed step skipped (the CLI prints a line per step) in one loop, then goes on
    # from the first step not committed; a HITL answer among them is the templates' `hitl_response`
    skipped = skip_committed_prefix(ctx, ((f"step[{i}]", label_of(step), i) for i, step in enumerate(steps)), total)
    hitl_response: str | None = next((r["response"] for r in reversed(skipped) if r.get("type") == "hitl"), None)
    for index in range(len(skipped), total):
        step = steps[index]
        hitl, unit, label = is_hitl(step), f"step[{index}]", label_of(step)
        record = skip_committed(ctx, unit, label, index, total)  # committed after a step that is not: skipped too
        if record is not None:
            if hitl:
                hitl_response = record["response"]
            continue
        ref = UnitRef(unit, label, index, total)
        template_ctx = _template_context(base, views, hitl_response)
        where = f"pattern.config.steps[{index}]"
        if hitl:
            response = hitl_answer(ctx, ref, step, template_ctx, where)
            hitl_response = response
            entry = {"index": index, "type": "hitl", "response": response}
        else:
            template_ctx.update(step.vars or {})
            response = run_agent_unit(
                ctx,
                ref,
                agent_id=step.agent,
                conv_key=step.agent,
                input_template=step.input,
                template_ctx=template_ctx,
                where=where,
                tool_names=step.tool_overrides,
            )
            entry = {"index": index, "agent": step.agent, "response": response}
        history.append(entry)
        views.append(step_view(entry))
        state = {"current_step": index + 1, "total_steps": total, "step_history": history}
        complete_unit(ctx, ref, {**entry, "agent": entry.get("agent")}, state, derived=not hitl)
    return _template_context(base, views, hitl_response)


def _template_context(base: dict[str, Any], views: list[dict[str, Any]], hitl_response: str | None) -> dict[str, Any]:
    """The template context of the next step: `views` are the earlier steps' `step_view`s (a list of its own)."""
    return {
        **base,
        "steps": list(views),
        "last_response": views[-1]["response"] if views else "",
        "hitl_response": hitl_response,
    }
