"""workflow: a DAG of tasks; a task runs once its deps are done, ready tasks run concurrently (max_parallel).

Each task commits on its own, so a finished task is never run again, whatever happened to its siblings. Each
task has its own conversation per agent (`task:<id>:<agent>`). Template: `tasks.<id>.response|status|agent`
(status `success`, as strands-cli), `hitl_response` (the latest answered HITL task in spec order).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from strands_durable.runner.concurrency import Job, check_cancelled, run_concurrently
from strands_durable.runner.context import RunContext
from strands_durable.runner.patterns.steps import commit_unit, execute_step, label_of
from strands_durable.runner.units import UnitRef, skip_unit


def run_workflow_tasks(ctx: RunContext) -> dict[str, Any]:
    tasks = ctx.spec.pattern.config.tasks
    base = ctx.base_template_context()
    done: dict[str, dict[str, Any]] = {}  # task id -> its committed record (kept under ctx.lock)

    def state() -> dict[str, Any]:
        finished = [t.id for t in tasks if t.id in done]
        return {
            "completed_tasks": finished,
            "task_outputs": {task_id: done[task_id]["response"] for task_id in finished},
            "total_tasks": len(tasks),
        }

    def run_task(position: int, task: Any) -> dict[str, Any]:
        ref = UnitRef(f"task:{task.id}", label_of(task), position, len(tasks))
        record = skip_unit(ctx, ref)
        if record is None:
            check_cancelled(ctx)
            with ctx.lock:
                template_ctx = _context(base, tasks, done)
            template_ctx["last_response"] = _default_input(task, done)
            record = execute_step(
                ctx,
                ref,
                task,
                conv_key=lambda agent: f"task:{task.id}:{agent}",
                template_ctx=template_ctx,
                where=f"pattern.config.tasks[{position}]",
            )

            def committed_state() -> dict[str, Any]:
                done[task.id] = record
                return state()

            commit_unit(ctx, ref, record, committed_state)
        with ctx.lock:
            done[task.id] = record
        return record

    def ready(results: Mapping[str, Any]) -> list[Job]:
        return [
            Job(task.id, lambda p=position, t=task: run_task(p, t))
            for position, task in enumerate(tasks)
            if task.id not in results and all(dep in results for dep in task.deps)
        ]

    run_concurrently(ctx, ready, max_parallel=ctx.spec.runtime.max_parallel)
    final = _context(base, tasks, done)
    final["last_response"] = done[tasks[-1].id]["response"] if tasks[-1].id in done else ""
    return final


def _default_input(task: Any, done: dict[str, dict[str, Any]]) -> str:
    """What a task without `input` is asked: its description, else its dependencies' responses."""
    if getattr(task, "description", None):
        return task.description
    return "\n\n".join(done[dep]["response"] for dep in task.deps if dep in done)


def _context(base: dict[str, Any], tasks: list[Any], done: dict[str, dict[str, Any]]) -> dict[str, Any]:
    views: dict[str, Any] = {}
    hitl_response = None
    for t in tasks:
        if t.id in done:
            record = done[t.id]
            views[t.id] = {"response": record["response"], "status": "success", "agent": record.get("agent") or "hitl"}
            if record.get("type") == "hitl":
                views[t.id]["type"] = "hitl"
                hitl_response = record["response"]
    return {**base, "tasks": views, "hitl_response": hitl_response}
