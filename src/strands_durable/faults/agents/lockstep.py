"""Racing resumers at every commit for a Python agent on `DurableSessionManager` (issue 33 item 3, agents).

The conversation is crashed at a point (in process, as the engine does); then, for every commit i of its resume,
from a fresh copy of what the crash left: a first resumer, in a child process, resumes as its user would (`agent()`
when an invocation is pending, else the interrupted prompt re-sent; then the remaining prompts) and stops right
after its i-th store commit (a crash-point subscriber waiting on a pipe), holding the session; a second resumer,
another child, does the same and must be refused (`SessionInUse`, exit 17); then the first goes on and must
finish. The conversation a fresh agent then loads, and the tools' workspace, must equal the golden run's.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from strands_durable.faults.agents.engine import answered, crash_at, pending, unknown_calls
from strands_durable.faults.agents.place import Found, Place, close_agent, converse, copy_tree, found_on
from strands_durable.faults.agents.run import AgentChaos, Run, build
from strands_durable.faults.kit import judge
from strands_durable.faults.kit.findings import FaultRun
from strands_durable.faults.kit.golden import AgentGoldenRun
from strands_durable.faults.kit.lockstep import PROCEEDED, VARIANT, StopAt, holding, race_at_commit
from strands_durable.faults.kit.scratch import reset_dir
from strands_durable.faults.kit.workspace import Files, read_files


def _resume(chaos: AgentChaos, place: Place, start: int, stop: StopAt | None = None) -> int:
    """Resume the conversation at `place` as its user would, stopping where `stop` says (its own commits counted,
    not those of the manager's hooks)."""
    with Run() as run:
        if stop is not None:
            run.bus.subscribe(holding(stop, lambda point: not point.path.startswith("hook/")))
        agent = build(chaos, place.context(chaos, "resume"), run)
        try:
            if start < len(chaos.prompts):
                if pending(agent):
                    agent()
                elif not answered(agent.messages, chaos.prompts[start]):
                    agent(chaos.prompts[start])
                converse(agent, chaos.prompts, place, start + 1)
        finally:
            close_agent(agent)
    return 0


def lockstep_agent(
    golden: AgentGoldenRun, point_id: str, workdir: Path, run: FaultRun, *, max_commits: int | None = None
) -> int:
    """Every commit i (at most `max_commits`) of the resume after a crash at `point_id`; returns how many."""
    chaos: AgentChaos = golden.target
    crashed = crash_at(golden, point_id)
    if not crashed.fired:
        run.add(point_id, "lockstep", "not-fired", "the crashed run never reached this point")
        return 0
    explored = 0
    while max_commits is None or explored < max_commits:
        place = Place(workdir / "lockstep")
        reset_dir(place.root)
        copy_tree(crashed.crashed.root, place.root)
        point = f"{point_id}/commit[{explored}]"

        def resume(stop: StopAt | None, here: Place = place) -> int:
            return _resume(chaos, here, crashed.acknowledged, stop)

        race = race_at_commit(run, point, explored, workdir / "first-stopped", resume)
        if race is None:  # the resume finished before this commit: every commit has been explored
            break
        explored += 1
        if race.first == PROCEEDED:
            try:
                found = found_on(chaos, place)
            except Exception as exc:  # two writers forked the session: it no longer loads
                run.add(point, VARIANT, "resume-failed", f"the session does not load: {type(exc).__name__}: {exc}")
                continue
            run.judged(point, VARIANT, _as_golden(golden, found, read_files(place.workspace), crashed.stored.results))
    return explored


def _as_golden(golden: AgentGoldenRun, found: Found, workspace: Files, stored: Counter[str]) -> list[judge.Problem]:
    """What the finished resume left equals the golden run (conversation, state, workspace), or, where a call was
    answered "outcome unknown", the contract's rule for it (no stored result answered so, the conversation equal
    up to it, no effect twice)."""
    unknown = unknown_calls(found)
    if not unknown:
        return [
            *judge.same_history(golden.comparable, found.windows),
            *judge.same_state(golden.states, found.states),
            *judge.same_workspace(golden.workspace.final, workspace),
        ]
    return [
        *judge.unknown_only_where_unstored(unknown, stored),
        *judge.same_until_unknown(golden.stored, found.stored),
        *judge.no_effect_twice(golden.workspace.final, workspace),
    ]
