"""graph: nodes (agents or HITL) joined by edges; `to: [..]` follows every listed node, `choose` the first
`when` that holds (`else` is the fallback), evaluated in the template sandbox. The first node is the entry;
the run ends when no node is left to visit.

Each node run is one unit `node:<id>#<k>` (k = that node's iteration, from 1), committed together with the
path, the iteration counts and the nodes still to visit, so a resume continues at the same place and never
re-evaluates a decision. A node may run `max_iterations` times (exit 10 beyond); `runtime.budgets.max_steps`
caps the node runs of the whole graph (exit 20). One conversation per agent across nodes.
Template (docs/templates.md): `nodes.<id>.response|iteration|agent|status` (empty, false and `not_executed` for
nodes not visited; a node's agent id names its latest result too), `terminal_node`, `total_steps`,
`iteration_counts`, `path`/`execution_path`, `hitl_response`.
"""

from __future__ import annotations

from typing import Any

from strands_durable.errors import BudgetExceeded, SpecError, WorkflowFailed
from strands_durable.runner.context import RunContext
from strands_durable.runner.patterns.steps import commit_unit, execute_step, label_of
from strands_durable.runner.units import UnitRef, skip_unit
from strands_durable.spec import evaluate_condition


def run_graph(ctx: RunContext) -> dict[str, Any]:
    config = ctx.spec.pattern.config
    nodes = config.nodes
    base = ctx.base_template_context()
    saved = ctx.state.pattern_state
    walk: dict[str, Any] = {
        "to_visit": list(saved.get("to_visit", [next(iter(nodes))] if not saved.get("path") else [])),
        "path": list(saved.get("path", [])),
        "iteration_counts": dict(saved.get("iteration_counts", {})),
        "node_results": dict(saved.get("node_results", {})),
    }
    max_steps = ctx.spec.runtime.budgets.max_steps
    while walk["to_visit"]:
        node_id = walk["to_visit"][0]
        if node_id not in nodes:
            raise SpecError(
                str(ctx.spec.source_path or "<spec>"),
                f"the session is about to run node '{node_id}', which the spec no longer defines",
                key_path=f"pattern.config.nodes.{node_id}",
            )
        k = walk["iteration_counts"].get(node_id, 0) + 1
        if k > config.max_iterations:
            raise WorkflowFailed(
                f"graph node '{node_id}' would run {k} times; pattern.config.max_iterations is "
                f"{config.max_iterations} (path so far: {' -> '.join(walk['path'])})"
            )
        if max_steps is not None and len(walk["path"]) >= max_steps:
            raise BudgetExceeded(
                f"graph stopped after {len(walk['path'])} node runs: runtime.budgets.max_steps={max_steps} "
                f"(next node: {node_id})"
            )
        node = nodes[node_id]
        ref = UnitRef(f"node:{node_id}#{k}", label_of(node), len(walk["path"]), None)
        record = skip_unit(ctx, ref)
        if record is None:
            record = execute_step(
                ctx,
                ref,
                node,
                conv_key=lambda agent: agent,
                template_ctx=_context(base, nodes, walk),
                where=f"pattern.config.nodes.{node_id}",
            )
            record.update(node=node_id, iteration=k)
        walk["iteration_counts"][node_id] = k
        walk["node_results"][node_id] = {"response": record["response"], "iteration": k, "agent": record.get("agent")}
        walk["path"].append(node_id)
        following = [n for n in _next_nodes(ctx, node_id, _context(base, nodes, walk)) if n not in walk["to_visit"][1:]]
        walk["to_visit"] = walk["to_visit"][1:] + following
        record["next"] = following
        if ctx.state.units.get(ref.unit, {}).get("status") != "completed":
            commit_unit(ctx, ref, record, lambda: _state(walk))
    return _context(base, nodes, walk)


def _next_nodes(ctx: RunContext, node_id: str, values: dict[str, Any]) -> list[str]:
    following: list[str] = []
    for e, edge in enumerate(ctx.spec.pattern.config.edges):
        if edge.source != node_id:
            continue
        if edge.to is not None:
            following.extend(edge.to)
            continue
        for c, choice in enumerate(edge.choose or []):
            where = f"pattern.config.edges[{e}].choose[{c}].when"
            if evaluate_condition(choice.when, values, where=where, source=str(ctx.spec.source_path or "")):
                following.append(choice.to)
                break
    return list(dict.fromkeys(following))


def untaken_edges(config: Any, unit_records: list[dict[str, Any]]) -> list[str]:
    """The declared edges (`from -> to`) that none of these graph unit records took (each records the nodes it
    led to under `next`), in declaration order."""
    taken = {(record.get("node"), following) for record in unit_records for following in record.get("next", ())}
    declared = [(edge.source, target) for edge in config.edges for target in edge.targets]
    return [f"{source} -> {target}" for source, target in dict.fromkeys(declared) if (source, target) not in taken]


def _state(walk: dict[str, Any]) -> dict[str, Any]:
    return {
        "current_node": walk["to_visit"][0] if walk["to_visit"] else None,
        "to_visit": list(walk["to_visit"]),
        "path": list(walk["path"]),
        "iteration_counts": dict(walk["iteration_counts"]),
        "node_results": {k: dict(v) for k, v in walk["node_results"].items()},
        "total_steps": len(walk["path"]),
        "terminal_node": walk["path"][-1] if walk["path"] and not walk["to_visit"] else None,
    }


class NotVisited(dict):
    """A node that has not run: false in `{% if nodes.x %}`, empty `response`, iteration 0."""

    def __init__(self, agent: str | None = None) -> None:
        super().__init__(response="", iteration=0, agent=agent, status="not_executed")

    def __bool__(self) -> bool:
        return False


def _context(base: dict[str, Any], nodes: dict[str, Any], walk: dict[str, Any]) -> dict[str, Any]:
    results = {node_id: _node_view(result) for node_id, result in walk["node_results"].items()}
    path = walk["path"]
    views: dict[str, Any] = {
        node_id: results.get(node_id) or NotVisited(getattr(node, "agent", None)) for node_id, node in nodes.items()
    }
    answers = [results[node_id]["response"] for node_id in path if results[node_id].get("type") == "hitl"]
    # specs written for strands-cli also name a node by its agent (`nodes.reviewer` for node `review`)
    for node_id in reversed(path):
        agent = results[node_id].get("agent")
        if agent and agent not in nodes and agent not in views:
            views[agent] = results[node_id]
    for node in nodes.values():
        agent = getattr(node, "agent", None)
        if agent and agent not in views:
            views[agent] = NotVisited()
    return {
        **base,
        "nodes": views,
        "last_response": results[path[-1]]["response"] if path else "",
        "terminal_node": path[-1] if path else None,
        "total_steps": len(path),
        "iteration_counts": dict(walk["iteration_counts"]),
        "path": list(path),
        "execution_path": list(path),
        "hitl_response": answers[-1] if answers else None,
    }


def _node_view(result: dict[str, Any]) -> dict[str, Any]:
    """A visited node as strands-cli shows it: response, agent, iteration, status `success` (HITL: `type`)."""
    view = {**result, "status": "success"}
    if result.get("agent") is None:
        view["type"] = "hitl"
    return view
