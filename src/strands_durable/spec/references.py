"""Checks that need the whole spec: agent names exist, task deps exist and have no cycle, graph edges name
nodes, review overrides name routes, templates compile, artifact paths stay relative.

Each check yields `Problem`s (a key path and a detail); the loader reports the first with its line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from strands_durable.spec import templates
from strands_durable.spec.diagnostics import Problem
from strands_durable.spec.document import KeyPath
from strands_durable.spec.fields import AGENT, CONDITION, TEMPLATE, markers_of
from strands_durable.spec.models import Spec
from strands_durable.spec.patterns import (
    AgentStep,
    GraphConfig,
    ParallelConfig,
    RoutingConfig,
    WorkflowConfig,
)


def _walk(value: Any, path: KeyPath) -> Iterator[tuple[KeyPath, Any, frozenset[Any]]]:
    """Every field value of a model tree with its key path (aliases as written) and its markers."""
    if isinstance(value, BaseModel):
        for name, field in type(value).model_fields.items():
            child = getattr(value, name)
            if child is None:
                continue
            child_path = (*path, field.alias or name)
            yield child_path, child, markers_of(field.annotation, field.metadata)
            yield from _walk(child, child_path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, (*path, index))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, (*path, str(key)))


def _syntax_problem(text: str, path: KeyPath, *, condition: bool = False) -> Problem | None:
    error = templates.syntax_error(text, condition=condition)
    return None if error is None else Problem(path, error[0], template_line=error[1])


CONDITIONAL_TEMPLATES = {"revise_prompt": "an evaluation scores below accept.min_score"}
"""Template fields a run may never render: a syntax error there is a warning at load time (real specs carry
such defects and still run to completion when the path is not taken), and an exit-3 error if it is rendered."""


def check_fields(spec: Spec) -> Iterator[Problem]:
    """Templates and conditions compile; every agent-naming field names an agent."""
    for path, value, markers in _walk(spec, ()):
        if TEMPLATE in markers:
            problem = _syntax_problem(value, path)
            if problem is not None and path and path[-1] in CONDITIONAL_TEMPLATES:
                problem = Problem(
                    problem.path,
                    f"{problem.detail} (rendered only when {CONDITIONAL_TEMPLATES[path[-1]]}; the run fails there)",
                    problem.template_line,
                    warning=True,
                )
        elif CONDITION in markers:
            problem = _syntax_problem(value, path, condition=True)
        elif AGENT in markers and value not in spec.agents:
            known = ", ".join(sorted(spec.agents))
            problem = Problem(path, f"unknown agent '{value}' (agents: {known})")
        else:
            problem = None
        if problem is not None:
            yield problem
        if isinstance(value, AgentStep) and value.vars:
            for name, item in value.vars.items():
                if isinstance(item, str):
                    problem = _syntax_problem(item, (*path, "vars", name))
                    if problem is not None:
                        yield problem


def _duplicates(ids: list[str], path: KeyPath, what: str) -> Iterator[Problem]:
    seen: set[str] = set()
    for index, item in enumerate(ids):
        if item in seen:
            yield Problem((*path, index, "id"), f"duplicate {what} id '{item}'")
        seen.add(item)


def find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """A dependency cycle as a closed list of names (`[a, b, a]`), or None. Iterative depth-first search."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for start in graph:
        if state.get(start):
            continue
        stack: list[tuple[str, Iterator[str]]] = [(start, iter(graph.get(start, [])))]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                names = [name for name, _ in stack]
                return [*names[names.index(child) :], child]
            elif not state.get(child) and child in graph:
                state[child] = 1
                stack.append((child, iter(graph[child])))
    return None


def check_workflow(config: WorkflowConfig, path: KeyPath) -> Iterator[Problem]:
    tasks_path = (*path, "tasks")
    ids = [task.id for task in config.tasks]
    yield from _duplicates(ids, tasks_path, "task")
    for index, task in enumerate(config.tasks):
        for dep_index, dep in enumerate(task.deps):
            dep_path = (*tasks_path, index, "deps", dep_index)
            if dep == task.id:
                yield Problem(dep_path, f"task '{task.id}' depends on itself")
            elif dep not in ids:
                yield Problem(dep_path, f"task '{task.id}' depends on unknown task '{dep}'")
    cycle = find_cycle({task.id: list(task.deps) for task in config.tasks})
    if cycle is not None and len(cycle) > 2:
        first = ids.index(cycle[0])
        yield Problem((*tasks_path, first, "deps"), "dependency cycle: " + " -> ".join(cycle))


def check_parallel(config: ParallelConfig, path: KeyPath) -> Iterator[Problem]:
    yield from _duplicates([branch.id for branch in config.branches], (*path, "branches"), "branch")


def check_routing(config: RoutingConfig, path: KeyPath) -> Iterator[Problem]:
    review = config.router.review_router
    if review is not None and review.default and review.default.startswith("route:"):
        route = review.default.removeprefix("route:").strip()
        if route not in config.routes:
            yield Problem(
                (*path, "router", "review_router", "default"),
                f"unknown route '{route}' (routes: {', '.join(config.routes)})",
            )


def check_graph(config: GraphConfig, path: KeyPath) -> Iterator[Problem]:
    nodes = config.nodes
    known = ", ".join(nodes)
    for index, edge in enumerate(config.edges):
        edge_path = (*path, "edges", index)
        if edge.source not in nodes:
            yield Problem((*edge_path, "from"), f"edge from unknown node '{edge.source}' (nodes: {known})")
        for target_index, target in enumerate(edge.to or []):
            if target not in nodes:
                yield Problem((*edge_path, "to", target_index), f"edge to unknown node '{target}' (nodes: {known})")
        choices = edge.choose or []
        for choice_index, choice in enumerate(choices):
            choice_path = (*edge_path, "choose", choice_index)
            if choice.to not in nodes:
                yield Problem((*choice_path, "to"), f"edge to unknown node '{choice.to}' (nodes: {known})")
            if choice.when.strip() == templates.ELSE and choice_index != len(choices) - 1:
                yield Problem((*choice_path, "when"), "`when: else` must be the last choice")


_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)


def check_artifacts(spec: Spec) -> Iterator[Problem]:
    """Artifact paths stay inside the output directory: not absolute, no `..` in the literal text."""
    for index, artifact in enumerate(spec.outputs.artifacts):
        literal = _TAG.split(artifact.path)
        parts = [part for chunk in literal for part in re.split(r"[/\\]", chunk)]
        absolute = artifact.path.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", artifact.path)
        if absolute or ".." in parts:
            yield Problem(
                ("outputs", "artifacts", index, "path"),
                f"artifact path '{artifact.path}' must be relative to the output directory, without '..'",
            )


_PATTERN_CHECKS = {
    WorkflowConfig: check_workflow,
    ParallelConfig: check_parallel,
    RoutingConfig: check_routing,
    GraphConfig: check_graph,
}


def find_problems(spec: Spec) -> list[Problem]:
    """Every reference problem in `spec`, in a stable order."""
    problems = list(check_fields(spec))
    config = spec.pattern.config
    check = _PATTERN_CHECKS.get(type(config))
    if check is not None:
        problems.extend(check(config, ("pattern", "config")))
    problems.extend(check_artifacts(spec))
    return problems


__all__ = ["Problem", "find_cycle", "find_problems"]
