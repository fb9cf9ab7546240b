"""The multi-agent scenarios: a user's Graph or Swarm with `DurableSessionManager`, as factories for the engine.

Four scenarios over the expenses tools of faults/agents/examples.py (each expense a file of the workspace): a
Graph (plan -> record -> review); a cyclic Graph with `reset_on_revisit` (draft -> review -> draft -> review ->
publish, each revisit afresh); a Swarm (triage hands off to a recorder, which calls two tools in parallel and
hands off to a reviewer); a Swarm whose two nodes hand off to each other until the handoff limit (each node
visited twice, afresh each time). `factory(scenario)` is the user's `build_agent(ctx)`; `explore(scenario, root)`
runs the engine (faults/agents/engine.py) on it: a forked child SIGKILLed at every crash point of the golden run
(a hook before and after every node, every store commit, every model call and tool), the orchestrator called
again with the task in a fresh build, judged by the kit's rules, each problem a `Finding`.

`python -m strands_durable.faults.agents.multiagent [graph|graph-loop|swarm|swarm-revisit ...]` prints one line
per scenario.
"""

from __future__ import annotations

import functools
import sys
import tempfile
from pathlib import Path
from typing import Any

from strands_durable.faults.agents.engine import AgentOutcome
from strands_durable.faults.agents.engine import explore as explore_agent
from strands_durable.faults.agents.examples import expense_tools
from strands_durable.faults.agents.run import AgentChaos, AgentContext, BuildAgent
from strands_durable.faults.kit.golden import AgentGoldenRun

SESSION_ID = "team-1"
TASK = "Record the taxi and the hotel."
_TAXI = {"name": "add_expense", "input": {"item": "taxi", "amount": 12}}
_HOTEL = {"name": "add_expense", "input": {"item": "hotel", "amount": 140}}
GRAPH_SCRIPTS: dict[str, list[Any]] = {
    "plan": ["Plan: record the taxi and the hotel."],
    "record": [[_TAXI, _HOTEL], [{"name": "total_expenses", "input": {}}], "Recorded both; the total is 202."],
    "review": ["Reviewed: all good."],
}
REVISIT_SCRIPTS: dict[str, list[Any]] = {  # each node runs twice, afresh each time, until the handoff limit
    "recorder": [
        [_TAXI],
        [{"name": "handoff_to_agent", "input": {"agent_name": "checker", "message": "Check it."}}],
        "Sent for checking.",
    ],
    "checker": [
        [{"name": "handoff_to_agent", "input": {"agent_name": "recorder", "message": "Record it again."}}],
        "Sent back.",
    ],
}
LOOP_SCRIPTS: dict[str, list[Any]] = {  # draft -> review -> draft -> review -> publish, afresh on each revisit
    "draft": [[_TAXI], "Drafted the expense report."],
    "review": ["Reviewed: revise once more."],
    "publish": ["Published the expense report."],
}
SWARM_SCRIPTS: dict[str, list[Any]] = {
    "triage": [
        [{"name": "handoff_to_agent", "input": {"agent_name": "recorder", "message": "Record the two expenses."}}],
        "Handed to the recorder.",
    ],
    "recorder": [
        [_TAXI, _HOTEL],
        [{"name": "handoff_to_agent", "input": {"agent_name": "reviewer", "message": "Check the total."}}],
        "Recorded both.",
    ],
    "reviewer": [[{"name": "total_expenses", "input": {}}], "Reviewed: the total is 202."],
}
SCENARIOS = ("graph", "graph-loop", "swarm", "swarm-revisit")
SCRIPTS = {
    "graph": GRAPH_SCRIPTS,
    "graph-loop": LOOP_SCRIPTS,
    "swarm": SWARM_SCRIPTS,
    "swarm-revisit": REVISIT_SCRIPTS,
}
ORDERS = {  # the node order of the uninterrupted run
    "graph": list(GRAPH_SCRIPTS),
    "graph-loop": ["draft", "review", "draft", "review", "publish"],
    "swarm": list(SWARM_SCRIPTS),
    "swarm-revisit": list(REVISIT_SCRIPTS) * 2,
}


def build(scenario: str, ctx: AgentContext) -> Any:
    """The user's factory: the scenario's Graph or Swarm on `ctx.storage_dir`, `DurableSessionManager` on it."""
    from strands import Agent

    from strands_durable.models.scripted import ScriptedModel
    from strands_durable.sdk import DurableSessionManager

    manager = DurableSessionManager(ctx.session_id, ctx.storage_dir)
    agents = [
        Agent(name=name, model=ScriptedModel(script), tools=expense_tools(ctx.workspace), callback_handler=None)
        for name, script in SCRIPTS[scenario].items()
    ]
    if scenario.startswith("swarm"):
        from strands.multiagent import Swarm

        limit = len(ORDERS[scenario]) if scenario == "swarm-revisit" else 20  # the revisits end at the limit
        return Swarm(agents, session_manager=manager, max_handoffs=limit)
    from strands.multiagent import GraphBuilder

    builder = GraphBuilder()
    for agent in agents:
        builder.add_node(agent, agent.name)
    if scenario == "graph-loop":
        builder.add_edge("draft", "review")
        builder.add_edge("review", "draft", condition=lambda state: _reviews(state) < 2)
        builder.add_edge("review", "publish", condition=lambda state: _reviews(state) >= 2)
        builder.set_entry_point("draft")
        builder.reset_on_revisit(True)
    else:
        builder.add_edge("plan", "record")
        builder.add_edge("record", "review")
        builder.set_entry_point("plan")
    builder.set_max_node_executions(10)
    builder.set_session_manager(manager)
    return builder.build()


def _reviews(state: Any) -> int:
    return sum(1 for node in state.execution_order if node.node_id == "review")


def factory(scenario: str) -> BuildAgent:
    """The scenario's `build_agent(ctx)`."""
    if scenario not in SCRIPTS:
        raise ValueError(f"unknown scenario {scenario!r}; choose from {', '.join(SCENARIOS)}")
    return functools.partial(build, scenario)


def explore(scenario: str, root: Path, *, max_points: int | None = None) -> tuple[AgentGoldenRun, list[AgentOutcome]]:
    """The engine over the scenario: its golden run, then a forked child SIGKILLed at every point (or at
    `max_points` spread over them), each resumed by calling the orchestrator again with the task, and judged."""
    chaos = AgentChaos(factory(scenario), (TASK,), session_id=SESSION_ID, max_points=max_points, faults=("kill",))
    return explore_agent(chaos, root)


def main(argv: list[str] | None = None) -> int:
    scenarios = (argv if argv is not None else sys.argv[1:]) or list(SCENARIOS)
    unknown = [s for s in scenarios if s not in SCRIPTS]
    if unknown:
        print(f"Error: unknown scenario {unknown[0]!r}; choose from {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        for scenario in scenarios:
            golden, outcomes = explore(scenario, Path(tmp) / scenario)
            bad = [o for o in outcomes if not o.ok]
            print(f"{scenario}: {len(outcomes)} kill points, {len(bad)} failed")
            for finding in [*golden.problems, *(f for o in bad for f in o.findings)]:
                print(f"  {finding}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
