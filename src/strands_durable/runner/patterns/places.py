"""Where each pattern renders templates, and which context names exist there (docs/templates.md lists them).

`template_places(spec)` yields every template of a spec with the names the pattern's executor puts in its
context at that place, beyond the run's input variables. The check before a session exists (runner/preflight.py)
reads it; the executors build exactly these names (tests/patterns/test_template_contexts.py holds them to it).
No strands import here: `strands validate` uses it too.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

BASE = frozenset({"name", "timestamp", "runtime", "context_policy", "execution_context"})
SEQUENCE = frozenset({"steps", "last_response", "hitl_response"})
ARTIFACT_EXTRA = frozenset({"TRACE", "cumulative_tokens"})

WORKFLOW_TASK = frozenset({"tasks", "last_response", "hitl_response"})
PARALLEL_REDUCE = frozenset({"branches", "last_response", "hitl_response"})
ROUTER = frozenset({"last_response"})
ROUTER_REVIEW = frozenset({"router", "chosen_route", "router_agent", "last_response"})
ROUTE_STEP = ROUTER_REVIEW | SEQUENCE
EVALUATOR_UNIT = frozenset(
    {
        "draft",
        "evaluation",
        "iteration",
        "iterations",
        "iteration_index",
        "current_draft",
        "current_evaluation",
        "last_response",
        "hitl_response",
    }
)
EVALUATOR_FINAL = (EVALUATOR_UNIT - {"current_draft", "current_evaluation"}) | {
    "final_score",
    "min_score",
    "max_iters",
    "history",
    "last_evaluation",
    "accepted",
    "stopped_by",
}
ORCHESTRATOR = frozenset(
    {"workers", "num_workers", "worker_count", "round_count", "orchestrator_response", "last_response"}
)
ORCHESTRATOR_NEXT_ROUND = ORCHESTRATOR | {"previous_workers"}
DECOMPOSITION_REVIEW = ORCHESTRATOR | {"subtasks", "task_count"}
WORKER = frozenset({"task", "worker_index", "round"})
REDUCE = ORCHESTRATOR | {"hitl_response"}
WRITEUP = REDUCE | {"reduce_response"}
ORCHESTRATOR_FINAL = WRITEUP | {"writeup_response"}
GRAPH = frozenset(
    {
        "nodes",
        "last_response",
        "terminal_node",
        "total_steps",
        "iteration_counts",
        "path",
        "execution_path",
        "hitl_response",
    }
)


@dataclass(frozen=True)
class Place:
    """One template: its key path, its text, the context names it may read beyond the inputs."""

    where: str
    template: str
    names: frozenset[str]
    steps_before: int | None = None  # `steps[n]` exists for n below this; None when not a step sequence
    condition: bool = False
    agent: str | None = None  # an agent's prompt: the agent that runs here
    tools: tuple[str, ...] | None = None  # the tools it gets here when not its own (`tool_overrides`)


def template_places(spec: Any) -> Iterator[Place]:
    """Every template of `spec` with its context, the agent prompts once per place their agent runs."""
    yield from _PATTERNS[spec.pattern.type](spec, spec.pattern.config)
    final = BASE | ARTIFACT_EXTRA | FINAL_NAMES[spec.pattern.type]
    for index, artifact in enumerate(spec.outputs.artifacts):
        yield Place(f"outputs.artifacts[{index}].path", artifact.path, final)
        yield Place(f"outputs.artifacts[{index}].from", artifact.source, final)


def _step(spec: Any, step: Any, where: str, names: frozenset[str], steps_before: int | None = None) -> Iterator[Place]:
    """A step, task, node or gate: its own templates and, for an agent, the agent's prompt, in one context."""
    names = BASE | names
    if getattr(step, "type", None) == "hitl":
        yield Place(f"{where}.prompt", step.prompt, names, steps_before)
        if step.context_display:
            yield Place(f"{where}.context_display", step.context_display, names, steps_before)
        return
    names = names | frozenset(getattr(step, "vars", None) or {})
    if getattr(step, "input", None):
        yield Place(f"{where}.input", step.input, names, steps_before)
    yield from _agent(spec, step.agent, names, steps_before, getattr(step, "tool_overrides", None))


def _agent(
    spec: Any, agent_id: str, names: frozenset[str], steps_before: int | None = None, tools: list[str] | None = None
) -> Iterator[Place]:
    prompt = spec.agents[agent_id].prompt
    overrides = None if tools is None else tuple(tools)
    yield Place(f"agents.{agent_id}.prompt", prompt, BASE | names, steps_before, agent=agent_id, tools=overrides)


def _sequence(spec: Any, steps: list[Any], where: str, names: frozenset[str]) -> Iterator[Place]:
    for index, step in enumerate(steps):
        yield from _step(spec, step, f"{where}[{index}]", names, index)


def _chain(spec: Any, config: Any) -> Iterator[Place]:
    yield from _sequence(spec, config.steps, "pattern.config.steps", SEQUENCE)


def _workflow(spec: Any, config: Any) -> Iterator[Place]:
    for index, task in enumerate(config.tasks):
        yield from _step(spec, task, f"pattern.config.tasks[{index}]", WORKFLOW_TASK)


def _parallel(spec: Any, config: Any) -> Iterator[Place]:
    for index, branch in enumerate(config.branches):
        yield from _sequence(spec, branch.steps, f"pattern.config.branches[{index}].steps", SEQUENCE)
    if config.reduce is not None:
        yield from _step(spec, config.reduce, "pattern.config.reduce", PARALLEL_REDUCE)


def _routing(spec: Any, config: Any) -> Iterator[Place]:
    router = config.router
    if router.input:
        yield Place("pattern.config.router.input", router.input, BASE | ROUTER)
    yield from _agent(spec, router.agent, ROUTER)
    if router.review_router is not None:
        yield from _step(spec, router.review_router, "pattern.config.router.review_router", ROUTER_REVIEW)
    for name, route in config.routes.items():
        yield from _sequence(spec, route.then, f"pattern.config.routes.{name}.then", ROUTE_STEP)


def _evaluator_optimizer(spec: Any, config: Any) -> Iterator[Place]:
    yield from _agent(spec, config.producer, EVALUATOR_UNIT)
    if config.revise_prompt:
        yield Place("pattern.config.revise_prompt", config.revise_prompt, BASE | EVALUATOR_UNIT)
    yield from _step(spec, config.evaluator, "pattern.config.evaluator", EVALUATOR_UNIT)
    if config.review_gate is not None:
        yield from _step(spec, config.review_gate, "pattern.config.review_gate", EVALUATOR_UNIT)


def _orchestrator_workers(spec: Any, config: Any) -> Iterator[Place]:
    yield from _agent(spec, config.orchestrator.agent, ORCHESTRATOR_NEXT_ROUND)
    if config.decomposition_review is not None:
        yield from _step(spec, config.decomposition_review, "pattern.config.decomposition_review", DECOMPOSITION_REVIEW)
    yield from _agent(spec, config.worker_template.agent, WORKER, tools=config.worker_template.tools)
    if config.reduce is not None:
        yield from _step(spec, config.reduce, "pattern.config.reduce", REDUCE)
    if config.reduce_review is not None:
        yield from _step(spec, config.reduce_review, "pattern.config.reduce_review", REDUCE | {"reduce_response"})
    if config.writeup is not None:
        yield from _step(spec, config.writeup, "pattern.config.writeup", WRITEUP)


def _graph(spec: Any, config: Any) -> Iterator[Place]:
    for node_id, node in config.nodes.items():
        yield from _step(spec, node, f"pattern.config.nodes.{node_id}", GRAPH)
    for e, edge in enumerate(config.edges):
        for c, choice in enumerate(edge.choose or []):
            where = f"pattern.config.edges[{e}].choose[{c}].when"
            yield Place(where, choice.when, BASE | GRAPH, condition=True)


_PATTERNS = {
    "chain": _chain,
    "workflow": _workflow,
    "parallel": _parallel,
    "routing": _routing,
    "evaluator_optimizer": _evaluator_optimizer,
    "orchestrator_workers": _orchestrator_workers,
    "graph": _graph,
}

FINAL_NAMES: dict[str, frozenset[str]] = {
    "chain": SEQUENCE,
    "workflow": WORKFLOW_TASK,
    "parallel": PARALLEL_REDUCE,
    "routing": ROUTE_STEP,
    "evaluator_optimizer": EVALUATOR_FINAL,
    "orchestrator_workers": ORCHESTRATOR_FINAL,
    "graph": GRAPH,
}
"""The names of each pattern's final context, which artifacts see (with BASE and ARTIFACT_EXTRA)."""
