"""Kill a `strands.multiagent` Graph or Swarm at every node boundary and store commit, resume it, judge the result.

Built on the conversations of faults/agents/examples.py (their world of recorded files, tools and recording
model). A scenario is a user's factory: a Graph (plan -> record -> review); a cyclic Graph with `reset_on_revisit`
(draft -> review -> draft -> review -> publish, each revisit afresh); a Swarm (triage hands off to a recorder, which
calls two tools in parallel and hands off to a reviewer); a Swarm whose two nodes hand off to each other until
the handoff limit (each node visited twice, afresh each time). `DurableSessionManager` is on the orchestrator
and a hook emits a crash point before and after every node. For each crash point of the golden run a forked
child runs the task and is SIGKILLed there; a fresh child builds the orchestrator again and calls it with the
same task (unless the session shows the invocation ended). Judged per point: the final status, node order,
node results and node conversations equal the golden run's; every tool ran as often as in the golden run, more
only where it ran before the kill without its result being stored; every request valid; no stored model turn
requested again (per node: no more requests than the golden run's less the answers stored at the crash, so no
completed node ran again). The judge's rules (faults/kit/judge.py) name each problem as a `Finding`.

`python -m strands_durable.faults.agents.multiagent [graph|swarm ...]` prints one line per scenario.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoint, CrashPoints
from strands_durable.faults.agents.examples import World, make_model, make_tools, read_lines, warm_imports
from strands_durable.faults.agents.run import node_hooks
from strands_durable.faults.kit import judge
from strands_durable.faults.kit.findings import Finding
from strands_durable.faults.kit.forking import run_in_child
from strands_durable.faults.kit.golden import AgentGoldenRun, dump_points, load_points
from strands_durable.faults.kit.scratch import reset_dir, write_scratch

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
ORDERS = {
    "graph": list(GRAPH_SCRIPTS),
    "graph-loop": ["draft", "review", "draft", "review", "publish"],
    "swarm": list(SWARM_SCRIPTS),
    "swarm-revisit": list(REVISIT_SCRIPTS) * 2,
}


def build(scenario: str, world: World, phase: str, crash: CrashPoints) -> Any:
    """The user's factory: the scenario's orchestrator with `DurableSessionManager` on it."""
    from strands import Agent

    from strands_durable.sdk import DurableSessionManager

    manager = DurableSessionManager(SESSION_ID, world.sessions, crash_points=crash)
    scripts = SCRIPTS[scenario]
    agents = {
        name: Agent(
            name=name,
            model=make_model(world, f"{phase}:{name}", script),
            tools=make_tools(world, f"{phase}:{name}"),
            callback_handler=None,
        )
        for name, script in scripts.items()
    }
    if scenario.startswith("swarm"):
        from strands.multiagent import Swarm

        limit = len(ORDERS[scenario]) if scenario == "swarm-revisit" else 20  # the revisits end at the limit
        return Swarm(list(agents.values()), session_manager=manager, hooks=[node_hooks(crash)], max_handoffs=limit)
    from strands.multiagent import GraphBuilder

    builder = GraphBuilder()
    for name, agent in agents.items():
        builder.add_node(agent, name)
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
    builder.set_hook_providers([node_hooks(crash)])
    return builder.build()


def _reviews(state: Any) -> int:
    return sum(1 for node in state.execution_order if node.node_id == "review")


def summary(orchestrator: Any, result: Any) -> dict[str, Any]:
    """What the user sees of a finished run, as JSON: status, node order, node results and conversations."""
    from strands_durable.history import normalize
    from strands_durable.models.request import normalise_messages

    order = getattr(result, "node_history", None) or getattr(result, "execution_order", [])
    return {
        "status": str(getattr(result, "status", None)),
        "order": [node.node_id for node in order],
        "results": {node_id: str(node.result) for node_id, node in sorted(getattr(result, "results", {}).items())},
        "conversations": {
            node_id: normalize(normalise_messages(node.executor.messages))
            for node_id, node in sorted(orchestrator.nodes.items())
        },
    }


def run(
    scenario: str,
    world: World,
    phase: str,
    kill_at: int | None = None,
    invoke: bool = True,
) -> int:
    """Run the task in a fresh orchestrator (killed at the `kill_at`-th crash point); write its summary (without
    `invoke`, only the restored node conversations) and the ids of the crash points it passed."""
    bus = CrashPoints()
    seen = [0]
    points: list[CrashPoint] = []

    def maybe_kill(point: CrashPoint) -> None:
        points.append(point)
        if seen[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        seen[0] += 1

    bus.subscribe(maybe_kill)
    orchestrator = build(scenario, world, phase, bus)
    result = orchestrator(TASK) if invoke else None
    write_scratch(world.final, json.dumps(summary(orchestrator, result)).encode())
    write_scratch(world.root / "points.json", dump_points(points))
    return 0


def golden_run(scenario: str, base: Path) -> AgentGoldenRun:
    """The uninterrupted run in a child: its points, summary (`comparable`), effects and requests per node."""
    warm_imports()
    world = World(base / f"golden-{scenario}")
    reset_dir(world.root)
    exit_ = run_in_child(lambda: run(scenario, world, "golden"))
    if exit_.code != 0:
        raise RuntimeError(f"the golden {scenario} run failed: {exit_.describe()}")
    node_requests = Counter(r["phase"].split(":")[1] for r in read_lines(world.requests))
    return AgentGoldenRun(
        target=scenario,
        workdir=world.root,
        points=load_points((world.root / "points.json").read_text()),
        comparable=json.loads(world.final.read_text()),
        effects=_effects(world),
        model_requests=node_requests.total(),
        node_requests=node_requests,
    )


def _effects(world: World) -> Counter[str]:
    """Tool executions by node and toolUseId (the scripts' ids repeat across nodes)."""
    return Counter(f"{line['phase'].split(':')[1]}/{line['id']}" for line in read_lines(world.ledger))


def stored_at_crash(world: World) -> tuple[dict[str, list[dict[str, Any]]], Counter[str], bool]:
    """Every conversation the crashed session holds (normalised as requests are recorded), how many results it
    holds per node/toolUseId, and whether the multi-agent invocation's end was committed."""
    from strands_durable.errors import SessionNotFound
    from strands_durable.faults.kit.stores import store_at
    from strands_durable.models.request import normalise_messages

    try:
        state = store_at(world.sessions).load(SESSION_ID)
    except SessionNotFound:
        return {}, Counter(), False
    convs = state.conversations.values()
    results: Counter[str] = Counter()  # a visit of a node repeats the toolUseIds of the node's earlier visits
    for conv in convs:
        ids = set(conv.tool_results) | {
            block["toolResult"]["toolUseId"]
            for message in conv.messages
            for block in message.get("content", ())
            if "toolResult" in block
        }
        results.update(f"{conv.key.split('.')[1]}/{i}" for i in ids)
    return {conv.key: normalise_messages(conv.messages) for conv in convs}, results, state.status == "idle"


def explore_point(scenario: str, golden: AgentGoldenRun, index: int, base: Path) -> list[Finding]:
    """Kill at the golden run's `index`-th crash point, resume in a fresh child, judge (empty: it passed)."""
    point = golden.points[index].id
    world = World(base / f"{scenario}-{index}")
    reset_dir(world.root)
    problems: list[tuple[str, str]] = []
    crashed = run_in_child(lambda: run(scenario, world, "crash", kill_at=index))
    if crashed.signal != signal.SIGKILL:
        problems.append(("not-fired", f"the crashed run was not killed: {crashed.describe()}"))
    stored, stored_results, ended = stored_at_crash(world)
    ran_at_crash = _effects(world)
    answered = Counter(key.split(".")[1] for key, conv in stored.items() for m in conv if m["role"] == "assistant")
    # a user calls the orchestrator again with the task unless its invocation had ended (the session is idle)
    resumed = run_in_child(lambda: run(scenario, world, "resume", invoke=not ended))
    if resumed.code != 0 or not world.final.exists():
        problems.append(("resume-failed", f"resume: {resumed.describe()}"))
    else:
        final = json.loads(world.final.read_text())
        parts = ("status", "order", "results", "conversations") if not ended else ("conversations",)
        problems += judge.same_parts(golden.comparable, final, parts)
        problems += judge.effects_once(golden.effects, _effects(world), ran_at_crash, stored_results)
        requests = read_lines(world.requests)
        problems += judge.requests_valid(
            ((i, r["invalid"][0]) for i, r in enumerate(requests) if r["invalid"]), "crash or resume"
        )
        asked = Counter(r["phase"].split(":")[1] for r in requests if r["phase"].startswith("resume"))
        problems += judge.node_turns_not_rerequested(golden.node_requests, answered, asked)
    return [Finding(rule, detail, "kill", point) for rule, detail in problems]


def explore(scenario: str, base: Path, every: int = 1) -> tuple[AgentGoldenRun, dict[str, list[Finding]]]:
    """The golden run, then a kill at every `every`-th point: point id -> its findings (empty: it passed)."""
    golden = golden_run(scenario, base)
    return golden, {
        golden.points[i].id: explore_point(scenario, golden, i, base) for i in range(0, len(golden.points), every)
    }


def main(argv: list[str] | None = None) -> int:
    scenarios = (argv if argv is not None else sys.argv[1:]) or list(SCENARIOS)
    with tempfile.TemporaryDirectory() as tmp:
        for scenario in scenarios:
            _golden, judged = explore(scenario, Path(tmp))
            bad = {point: findings for point, findings in judged.items() if findings}
            print(f"{scenario}: {len(judged)} kill points, {len(bad)} failed")
            for findings in bad.values():
                for finding in findings:
                    print(f"  {finding}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
