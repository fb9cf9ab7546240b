"""parallel: branches run concurrently, each a sequence of steps committed one by one; `reduce` runs once after
every branch finished. Each branch has its own conversation per agent (`branch:<id>:<agent>`).

Template: `steps[n]` inside a branch; `branches.<id>.response|status|steps|step_history` (its last step's
response) in reduce and artifacts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from strands_durable.runner.concurrency import Job, check_cancelled, run_concurrently
from strands_durable.runner.context import RunContext
from strands_durable.runner.patterns.steps import (
    Sequence,
    committed_steps,
    label_of,
    run_sequence,
    run_single,
    step_view,
)
from strands_durable.runner.units import UnitRef


def run_parallel(ctx: RunContext) -> dict[str, Any]:
    config = ctx.spec.pattern.config
    branches = config.branches
    base = ctx.base_template_context()
    offsets = [sum(len(b.steps) for b in branches[:i]) for i in range(len(branches))]
    total = offsets[-1] + len(branches[-1].steps) + (1 if config.reduce is not None else 0)
    # kept under ctx.lock; a resume starts from the steps already committed, so the position a branch commits
    # with its step names its siblings' committed steps, as the uninterrupted run's does
    progress = {b.id: committed_steps(ctx, b.steps, f"branch:{b.id}/") for b in branches}
    reduce_record: dict[str, Any] = {}

    def state() -> dict[str, Any]:
        finished = [b.id for b in branches if len(progress[b.id]) == len(b.steps)]
        out = {
            "completed_branches": finished,
            "branch_outputs": {bid: progress[bid][-1]["response"] for bid in finished},
            "branch_steps": {b.id: len(progress[b.id]) for b in branches},
            "total_branches": len(branches),
        }
        if reduce_record:
            out["reduce_response"] = reduce_record["response"]
        return out

    def run_branch(position: int, branch: Any) -> list[dict[str, Any]]:
        def committed_state(entries: list[dict[str, Any]]) -> dict[str, Any]:
            progress[branch.id] = list(entries)
            return state()

        seq = Sequence(
            prefix=f"branch:{branch.id}/",
            where=f"pattern.config.branches[{position}].steps",
            conv_key=lambda agent: f"branch:{branch.id}:{agent}",
            first_index=offsets[position],
            total=total,
        )
        entries = run_sequence(ctx, branch.steps, seq, base, committed_state, between=lambda: check_cancelled(ctx))
        with ctx.lock:
            progress[branch.id] = entries
        return entries

    def ready(results: Mapping[str, Any]) -> list[Job]:
        return [
            Job(branch.id, lambda p=position, b=branch: run_branch(p, b))
            for position, branch in enumerate(branches)
            if branch.id not in results
        ]

    run_concurrently(ctx, ready, max_parallel=ctx.spec.runtime.max_parallel)
    final = _context(base, branches, progress)
    if config.reduce is not None:
        step = config.reduce
        ref = UnitRef("reduce", label_of(step), total - 1, total)

        def reduced_state(record: dict[str, Any]) -> dict[str, Any]:
            reduce_record.update(record)
            return state()

        record = run_single(ctx, ref, step, final, "pattern.config.reduce", reduced_state)
        final["last_response"] = record["response"]
        if record.get("type") == "hitl":
            final["hitl_response"] = record["response"]
    return final


def _context(base: dict[str, Any], branches: list[Any], progress: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    views = {}
    for b in branches:
        steps = [step_view(e) for e in progress[b.id]]
        views[b.id] = {"response": steps[-1]["response"], "status": "success", "steps": steps, "step_history": steps}
    joined = "\n\n".join(f"[{bid}]\n{view['response']}" for bid, view in views.items())
    return {**base, "branches": views, "last_response": joined, "hitl_response": None}
