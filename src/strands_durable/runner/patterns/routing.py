"""routing: a router agent picks one route, whose steps then run like a chain.

The decision is committed before any route step runs and is never asked again on resume; an answer naming no
route is corrected in the router's own conversation up to `max_retries` times, then the run fails (exit 10).
`review_router` lets a human approve ("approved") or override ("route:<name>") the decision. The router and the
route steps share one conversation per agent. Template: `router.chosen_route`, `router.response`, `chosen_route`,
`router_agent`, and `steps[n]` within the route.
"""

from __future__ import annotations

from typing import Any

from strands_durable.errors import WorkflowFailed
from strands_durable.models.contracts import parse_route, route_instruction
from strands_durable.runner.context import RunContext
from strands_durable.runner.patterns.contract_unit import ask_with_contract
from strands_durable.runner.patterns.steps import Sequence, commit_unit, run_sequence, sequence_context
from strands_durable.runner.units import UnitRef, hitl_answer, skip_unit

OVERRIDE_PREFIX = "route:"


def run_routing(ctx: RunContext) -> dict[str, Any]:
    config = ctx.spec.pattern.config
    router = config.router
    names = list(config.routes)
    base = ctx.base_template_context()
    decision = _decide(ctx, router, names, base)
    chosen = decision["chosen_route"]
    if router.review_router is not None:
        chosen = _review(ctx, router.review_router, names, base, decision)
    steps = config.routes[chosen].then
    routed = _routed(base, router, chosen, decision)

    def state(entries: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "router_decision": decision,
            "chosen_route": chosen,
            "current_step": len(entries),
            "total_steps": len(steps),
            "step_history": list(entries),
        }

    # the route's steps are numbered within the route, as strands-cli runs them (a chain); the router is a role
    seq = Sequence(f"route:{chosen}/", f"pattern.config.routes.{chosen}.then", lambda a: a, 0, len(steps))
    entries = run_sequence(ctx, steps, seq, routed, state)
    return sequence_context(routed, entries)


def _decide(ctx: RunContext, router: Any, names: list[str], base: dict[str, Any]) -> dict[str, Any]:
    ref = UnitRef("router", router.agent, 0, None)
    record = skip_unit(ctx, ref)
    if record is not None:
        return {k: record[k] for k in ("chosen_route", "response", "attempts")}
    response, chosen, attempts = ask_with_contract(
        ctx,
        ref,
        agent_id=router.agent,
        conv_key=router.agent,
        input_template=router.input,
        template_ctx={**base, "last_response": ""},
        where="pattern.config.router",
        instruction=route_instruction(names),
        parse=lambda text: parse_route(text, names),
        retries=router.max_retries,
        what="the router",
    )
    decision = {"chosen_route": chosen, "response": response, "attempts": attempts}
    commit_unit(ctx, ref, {"agent": router.agent, **decision}, lambda: {"router_decision": decision})
    return decision


def _review(ctx: RunContext, step: Any, names: list[str], base: dict[str, Any], decision: dict[str, Any]) -> str:
    ref = UnitRef("router.review", "hitl", 1, None)
    record = skip_unit(ctx, ref)
    if record is not None:
        return record["chosen_route"]
    template_ctx = _routed(base, ctx.spec.pattern.config.router, decision["chosen_route"], decision)
    answer = hitl_answer(ctx, ref, step, template_ctx, "pattern.config.router.review_router")
    chosen = decision["chosen_route"]
    text = answer.strip()
    if text.lower().startswith(OVERRIDE_PREFIX):
        override = text[len(OVERRIDE_PREFIX) :].strip()
        if override not in names:
            raise WorkflowFailed(f"review_router answer {text!r} names no route (routes: {', '.join(names)})")
        chosen = override
    record = {"type": "hitl", "agent": None, "response": answer, "chosen_route": chosen}
    commit_unit(ctx, ref, record, lambda: {"router_decision": decision, "chosen_route": chosen})
    return chosen


def _routed(base: dict[str, Any], router: Any, chosen: str, decision: dict[str, Any]) -> dict[str, Any]:
    """The context after the decision: `router.chosen_route|response`, `chosen_route`, `router_agent`."""
    return {
        **base,
        "router": {"chosen_route": chosen, "response": decision["response"]},
        "chosen_route": chosen,
        "router_agent": router.agent,
        "last_response": "",
    }
