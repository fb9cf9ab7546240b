"""chain: steps run one after another; each sees every earlier step's response; one conversation per agent."""

from __future__ import annotations

from typing import Any

from strands_durable.runner.context import RunContext
from strands_durable.runner.patterns.steps import is_hitl, step_view
from strands_durable.runner.units import UnitRef, complete_unit, hitl_answer, run_agent_unit, skip_committed


def run_chain(ctx: RunContext) -> dict[str, Any]:
    steps = ctx.spec.pattern.config.steps
    history: list[dict[str, Any]] = list(ctx.state.pattern_state.get("step_history", []))
    base = ctx.base_template_context()
    hitl_response: str | None = None
    total = len(steps)
    for index, step in enumerate(steps):
        hitl, unit = is_hitl(step), f"step[{index}]"
        label = "hitl" if hitl else step.agent
        record = skip_committed(ctx, unit, label, index, total)  # a resume passes each committed step: no UnitRef
        if record is not None:
            if hitl:
                hitl_response = record["response"]
            continue
        ref = UnitRef(unit, label, index, total)
        template_ctx = _template_context(base, history, hitl_response)
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
        state = {"current_step": index + 1, "total_steps": total, "step_history": history}
        complete_unit(ctx, ref, {**entry, "agent": entry.get("agent")}, state, derived=not hitl)
    return _template_context(base, history, hitl_response)


def _template_context(base: dict[str, Any], history: list[dict[str, Any]], hitl_response: str | None) -> dict[str, Any]:
    steps = [step_view(h) for h in history]
    return {
        **base,
        "steps": steps,
        "last_response": steps[-1]["response"] if steps else "",
        "hitl_response": hitl_response,
    }
