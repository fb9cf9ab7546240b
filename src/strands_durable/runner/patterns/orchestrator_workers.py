"""orchestrator_workers: an orchestrator splits the work into tasks (a JSON list), workers do them concurrently,
then optional `reduce` and `writeup` steps combine the results.

The decomposition is committed before any worker starts; each worker commits on its own, in its own
conversation (`worker:r<round>.w<i>:<agent>`). `limits.max_workers` caps the tasks of a round and how many
workers run at once. Rounds (`limits.max_rounds`, default 1): in round r > 0 the orchestrator sees the previous
round's results and returns further tasks, or an empty list when the work is done. `decomposition_review`
(after each decomposition) and `reduce_review` (after reduce) ask a human. Template (docs/templates.md):
`workers[i].response|task|status` (all rounds, in order), `num_workers`/`worker_count`, `round_count`,
`orchestrator_response`; `subtasks`/`task_count` in the decomposition review; `reduce_response`, `writeup_response`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from strands_durable.models.contracts import parse_task_list, task_list_instruction
from strands_durable.runner.concurrency import Job, check_cancelled, run_concurrently
from strands_durable.runner.context import RunContext
from strands_durable.runner.patterns.contract_unit import ask_with_contract
from strands_durable.runner.patterns.steps import commit_unit, execute_step, label_of, run_single
from strands_durable.runner.units import UnitRef, run_agent_unit, skip_unit

NEXT_ROUND_INPUT = (
    "Round {{ round_count }} is done. Results of its workers:\n"
    "{% for worker in previous_workers %}- Task: {{ worker.task }}\n  Result: {{ worker.response }}\n{% endfor %}"
    "If more work is needed, give the next tasks; give an empty array [] when the work is complete."
)
WORKER_INPUT = "{{ task }}"


def run_orchestrator_workers(ctx: RunContext) -> dict[str, Any]:
    config = ctx.spec.pattern.config
    orchestrator, template = config.orchestrator, config.worker_template
    limits = orchestrator.limits
    base = ctx.base_template_context()
    rounds: list[dict[str, Any]] = []  # {round, tasks, orchestrator_response, workers: {i: record}} (ctx.lock)
    tail: dict[str, Any] = {}

    def state() -> dict[str, Any]:
        return {
            "rounds": [
                {
                    "round": r["round"],
                    "tasks": r["tasks"],
                    "completed_workers": sorted(r["workers"]),
                    "worker_outputs": {str(i): r["workers"][i]["response"] for i in sorted(r["workers"])},
                }
                for r in rounds
            ],
            "round_count": len(rounds),
            **tail,
        }

    for r in range(limits.max_rounds or 1):
        ref = UnitRef(f"round[{r}]:orchestrator", orchestrator.agent, 0, None)
        record = skip_unit(ctx, ref)
        if record is None:
            response, tasks, attempts = ask_with_contract(
                ctx,
                ref,
                agent_id=orchestrator.agent,
                conv_key=orchestrator.agent,
                input_template=NEXT_ROUND_INPUT if r > 0 else None,
                template_ctx=_context(base, rounds),
                where="pattern.config.orchestrator",
                instruction=task_list_instruction(limits.max_workers),
                parse=lambda text: parse_task_list(text, max_workers=limits.max_workers),
                retries=2,
                what="the orchestrator",
            )
            rounds.append({"round": r, "tasks": tasks, "orchestrator_response": response, "workers": {}})
            record = {"agent": orchestrator.agent, "response": response, "tasks": tasks, "attempts": attempts}
            commit_unit(ctx, ref, record, state)
        else:
            rounds.append({"round": r, "tasks": record["tasks"], "orchestrator_response": record["response"]})
            rounds[-1]["workers"] = {}
        if not rounds[-1]["tasks"]:
            break
        if config.decomposition_review is not None:
            tasks = rounds[-1]["tasks"]
            _review(
                ctx,
                UnitRef(f"round[{r}]:decomposition_review", "hitl", 0, None),
                config.decomposition_review,
                _context(base, rounds) | {"subtasks": [{"task": t} for t in tasks], "task_count": len(tasks)},
                "pattern.config.decomposition_review",
                state,
            )
        _run_workers(ctx, rounds[-1], template, limits, base, rounds, state)

    values = _context(base, rounds) | {"hitl_response": None, "reduce_response": None, "writeup_response": None}
    if config.reduce is not None:
        record = run_single(
            ctx,
            UnitRef("reduce", label_of(config.reduce), 0, None),
            config.reduce,
            values,
            "pattern.config.reduce",
            lambda rec: tail.update(reduce_response=rec["response"]) or state(),
        )
        values["last_response"] = values["reduce_response"] = record["response"]
        tail["reduce_response"] = record["response"]  # also when a resume found reduce committed: later states keep it
    if config.reduce_review is not None:
        answer = _review(
            ctx,
            UnitRef("reduce_review", "hitl", 0, None),
            config.reduce_review,
            values,
            "pattern.config.reduce_review",
            state,
        )
        values["hitl_response"] = answer
    if config.writeup is not None:
        record = run_single(
            ctx,
            UnitRef("writeup", label_of(config.writeup), 0, None),
            config.writeup,
            values,
            "pattern.config.writeup",
            lambda rec: tail.update(writeup_response=rec["response"]) or state(),
        )
        values["last_response"] = values["writeup_response"] = record["response"]
    return values


def _run_workers(
    ctx: RunContext,
    current: dict[str, Any],
    template: Any,
    limits: Any,
    base: dict[str, Any],
    rounds: list[dict[str, Any]],
    state: Any,
) -> None:
    r, tasks = current["round"], current["tasks"]

    def run_worker(i: int, task: str) -> dict[str, Any]:
        ref = UnitRef(f"round[{r}]:worker[{i}]", template.agent, i, len(tasks))
        record = skip_unit(ctx, ref)
        if record is None:
            check_cancelled(ctx)
            response = run_agent_unit(
                ctx,
                ref,
                agent_id=template.agent,
                conv_key=f"worker:r{r}.w{i}:{template.agent}",
                input_template=WORKER_INPUT,
                template_ctx={**base, "task": task, "worker_index": i, "round": r},
                where="pattern.config.worker_template",
                tool_names=template.tools,
            )
            record = {"agent": template.agent, "response": response, "task": task, "round": r, "worker": i}

            def committed_state() -> dict[str, Any]:
                current["workers"][i] = record
                return state()

            commit_unit(ctx, ref, record, committed_state)
        with ctx.lock:
            current["workers"][i] = record
        return record

    def ready(results: Mapping[str, Any]) -> list[Job]:
        return [Job(str(i), lambda i=i, t=t: run_worker(i, t)) for i, t in enumerate(tasks) if str(i) not in results]

    width = min(ctx.spec.runtime.max_parallel, limits.max_workers or ctx.spec.runtime.max_parallel)
    run_concurrently(ctx, ready, max_parallel=width)


def _review(ctx: RunContext, ref: UnitRef, step: Any, values: dict[str, Any], where: str, state: Any) -> str:
    record = skip_unit(ctx, ref)
    if record is not None:
        return record["response"]
    entry = execute_step(ctx, ref, step, conv_key=lambda agent: agent, template_ctx=values, where=where)
    commit_unit(ctx, ref, entry, state)
    return entry["response"]


def _workers(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"response": r["workers"][i]["response"], "task": task, "status": "success", "round": r["round"]}
        for r in rounds
        for i, task in enumerate(r["tasks"])
        if i in r["workers"]
    ]


def _context(base: dict[str, Any], rounds: list[dict[str, Any]]) -> dict[str, Any]:
    workers = _workers(rounds)
    joined = "\n\n".join(f"Task: {w['task']}\nResult: {w['response']}" for w in workers)
    return {
        **base,
        "workers": workers,
        "num_workers": len(workers),
        "worker_count": len(workers),
        "previous_workers": _workers(rounds[-1:]) if rounds else [],
        "round_count": len(rounds),
        "orchestrator_response": rounds[-1]["orchestrator_response"] if rounds else "",
        "last_response": joined,
    }
