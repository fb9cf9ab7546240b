"""evaluator_optimizer: a producer drafts, an evaluator scores (JSON {score, issues, fixes}), the producer
revises, until the score reaches `accept.min_score` or `accept.max_iters` drafts were made.

Every draft and every evaluation is its own committed unit (`iteration[<i>]:producer`, `iteration[<i>]:evaluator`);
the producer and the evaluator each keep one conversation across iterations. `review_gate` asks a human between
iterations ("stop" accepts the current draft). Template (docs/templates.md): `draft`, `evaluation.score|issues|
fixes`, `iteration` (1-based number of the latest draft), `iteration_index` (0-based), `iterations[i]` (strands-cli's
history entries) and `current_draft`/`current_evaluation`; artifacts see strands-cli's run result instead:
`iterations` (the count), `history`, `final_score`, `min_score`, `max_iters`, `last_evaluation`.
"""

from __future__ import annotations

from typing import Any

from strands_durable.models.contracts import evaluation_instruction, parse_evaluation
from strands_durable.runner.context import RunContext
from strands_durable.runner.patterns.contract_unit import ask_with_contract
from strands_durable.runner.patterns.steps import commit_unit
from strands_durable.runner.units import UnitRef, hitl_answer, run_agent_unit, skip_unit

EVALUATE_INPUT = "Evaluate this draft:\n\n{{ draft }}"
REVISE_INPUT = (
    "Revise your draft (score {{ evaluation.score }}/100).\n"
    "{% for issue in evaluation.issues %}Issue: {{ issue }}\n{% endfor %}"
    "{% for fix in evaluation.fixes %}Fix: {{ fix }}\n{% endfor %}"
    "{% if hitl_response %}Reviewer: {{ hitl_response }}\n{% endif %}"
)
PREVIEW_CHARS = 100  # as strands-cli
STOP_ANSWERS = frozenset({"stop", "accept", "accepted", "done"})


def run_evaluator_optimizer(ctx: RunContext) -> dict[str, Any]:
    config = ctx.spec.pattern.config
    producer, evaluator, accept = config.producer, config.evaluator, config.accept
    base = ctx.base_template_context()
    iterations: list[dict[str, Any]] = []
    outcome = {"accepted": False, "stopped_by": None}
    hitl_response: str | None = None

    def state() -> dict[str, Any]:
        return {
            "current_iteration": len(iterations),
            "max_iters": accept.max_iters,
            "min_score": accept.min_score,
            "iterations": [dict(item) for item in iterations],
            **outcome,
        }

    for i in range(accept.max_iters):
        last = iterations[-1] if iterations else None
        values = _context(base, iterations, hitl_response)
        ref = UnitRef(f"iteration[{i}]:producer", producer, 2 * i, None)
        record = skip_unit(ctx, ref)
        if record is None:
            revise = None if last is None else (config.revise_prompt or REVISE_INPUT)
            draft = run_agent_unit(
                ctx,
                ref,
                agent_id=producer,
                conv_key=producer,
                input_template=revise,
                template_ctx=values,
                where="pattern.config.revise_prompt" if revise else "pattern.config.producer",
            )
            iterations.append({"iteration": i, "draft": draft, "draft_preview": draft[:PREVIEW_CHARS]})
            commit_unit(ctx, ref, {"agent": producer, "response": draft, "iteration": i}, state)
        else:
            draft = record["response"]
            iterations.append({"iteration": i, "draft": draft, "draft_preview": draft[:PREVIEW_CHARS]})

        values = _context(base, iterations, hitl_response)
        ref = UnitRef(f"iteration[{i}]:evaluator", evaluator.agent, 2 * i + 1, None)
        record = skip_unit(ctx, ref)
        if record is None:
            response, verdict, attempts = ask_with_contract(
                ctx,
                ref,
                agent_id=evaluator.agent,
                conv_key=evaluator.agent,
                input_template=evaluator.input or EVALUATE_INPUT,
                template_ctx=values,
                where="pattern.config.evaluator",
                instruction=evaluation_instruction(),
                parse=parse_evaluation,
                retries=2,
                what="the evaluator",
            )
            record = {
                "agent": evaluator.agent,
                "response": response,
                "iteration": i,
                "score": verdict.score,
                "issues": verdict.issues,
                "fixes": verdict.fixes,
                "attempts": attempts,
            }
            iterations[-1].update(score=verdict.score, issues=verdict.issues, fixes=verdict.fixes)
            if verdict.score >= accept.min_score:
                outcome.update(accepted=True, stopped_by="min_score")
            elif i + 1 == accept.max_iters:
                outcome["stopped_by"] = "max_iters"
            commit_unit(ctx, ref, record, state)
        else:
            iterations[-1].update(score=record["score"], issues=record["issues"], fixes=record["fixes"])
            if record["score"] >= accept.min_score:
                outcome.update(accepted=True, stopped_by="min_score")
            elif i + 1 == accept.max_iters:
                outcome["stopped_by"] = "max_iters"
        if outcome["stopped_by"] is not None:
            break
        if config.review_gate is not None:
            hitl_response = _review(
                ctx, config.review_gate, i, _context(base, iterations, hitl_response), outcome, state
            )
            if outcome["stopped_by"] is not None:
                break
    return _final_context(_context(base, iterations, hitl_response), accept, outcome)


def _review(ctx: RunContext, gate: Any, i: int, values: dict[str, Any], outcome: dict[str, Any], state: Any) -> str:
    """The human's word between iterations; "stop" (or "accept", "done") ends the loop with the current draft."""
    ref = UnitRef(f"iteration[{i}]:review", "hitl", 2 * i + 1, None)
    record = skip_unit(ctx, ref)
    answer = (
        record["response"] if record is not None else hitl_answer(ctx, ref, gate, values, "pattern.config.review_gate")
    )
    if answer.strip().lower() in STOP_ANSWERS:
        outcome["stopped_by"] = "review_gate"
    if record is None:
        commit_unit(ctx, ref, {"type": "hitl", "agent": None, "response": answer, "iteration": i}, state)
    return answer


def _context(base: dict[str, Any], iterations: list[dict[str, Any]], hitl_response: str | None) -> dict[str, Any]:
    """The context of every unit and gate: the latest draft and its evaluation, and every iteration so far."""
    views = [_iteration_view(n, item) for n, item in enumerate(iterations, start=1)]
    last = iterations[-1] if iterations else {}
    draft = last.get("draft", "")
    evaluation = {"score": last.get("score"), "issues": last.get("issues", []), "fixes": last.get("fixes", [])}
    return {
        **base,
        "draft": draft,
        "current_draft": draft,
        "evaluation": evaluation,
        "current_evaluation": evaluation,
        "iteration": max(len(iterations), 1),
        "iterations": views,
        "iteration_index": max(len(iterations) - 1, 0),
        "last_response": draft,
        "hitl_response": hitl_response,
    }


def _iteration_view(number: int, item: dict[str, Any]) -> dict[str, Any]:
    """One iteration as strands-cli shows it: 1-based `iteration`, its draft, preview and evaluation."""
    issues, fixes = item.get("issues", []), item.get("fixes", [])
    return {
        "iteration": number,
        "score": item.get("score"),
        "issues": issues,
        "fixes": fixes,
        "draft_preview": item["draft_preview"],
        "draft": item["draft"],
        "evaluation": {"score": item.get("score"), "issues": issues, "fixes": fixes, "feedback": "; ".join(issues)},
    }


def _final_context(values: dict[str, Any], accept: Any, outcome: dict[str, Any]) -> dict[str, Any]:
    """What artifacts see, with strands-cli's run result: `iterations` is then the count, `history` the list."""
    history = values["iterations"]
    last = history[-1] if history else None
    final = {
        **values,
        "iterations": len(history),
        "history": history,
        "final_score": last["score"] if last else 0,
        "min_score": accept.min_score,
        "max_iters": accept.max_iters,
        **outcome,
    }
    del final["current_draft"], final["current_evaluation"]
    if last is not None:
        final["last_evaluation"] = {k: last[k] for k in ("score", "issues", "fixes")}
    return final
