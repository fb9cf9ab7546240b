"""Racing resumers at every commit for a Python agent on `DurableSessionManager` (issue 33 item 3, agents).

The conversation is crashed at a point (in process, as the engine does); then, for every commit i of its resume,
from a fresh copy of what the crash left: a first resumer, in a child process, resumes as its user would (`agent()`
when an invocation is pending, else the interrupted prompt re-sent; then the remaining prompts) and stops right
after its i-th store commit (a crash-point subscriber waiting on a pipe), holding the session; a second resumer,
another child, does the same and must be refused (`SessionInUse`, exit 17); then the first goes on and must
finish. The conversation a fresh agent then loads, and the tools' workspace, must equal the golden run's.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from strands_durable.crashpoints import CrashPoint
from strands_durable.errors import ExitCode
from strands_durable.faults.agents.engine import answered, crash_at, pending, unknown_calls
from strands_durable.faults.agents.place import Found, Place, close_agent, converse, copy_tree, found_on
from strands_durable.faults.agents.run import AgentChaos, Run, build
from strands_durable.faults.classes.lockstep import stopped_or_ended
from strands_durable.faults.kit import judge
from strands_durable.faults.kit.findings import FaultRun
from strands_durable.faults.kit.forking import ChildExit, fork_child, run_in_child, wait_child
from strands_durable.faults.kit.golden import AgentGoldenRun
from strands_durable.faults.kit.scratch import reset_dir, write_scratch
from strands_durable.faults.kit.workspace import Files, read_files


def _resume(chaos: AgentChaos, place: Place, start: int, stop: tuple[int, Path, int] | None = None) -> int:
    """Resume the conversation at `place` as its user would; with `stop` = (i, marker, pipe), write `marker` right
    after this resume's i-th store commit and wait there until the parent closes the pipe."""
    with Run() as run:
        if stop is not None:
            commit, marker, gate = stop
            seen = [0]

            def hold(point: CrashPoint) -> None:
                if point.site == "store.after_commit" and not point.path.startswith("hook/"):
                    seen[0] += 1
                    if seen[0] == commit + 1:
                        write_scratch(marker, point.id.encode())
                        os.read(gate, 1)  # returns once the parent closed the pipe's other end

            run.bus.subscribe(hold)
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
    proceeded, refused = ChildExit(0, None), ChildExit(int(ExitCode.SESSION_UNUSABLE), None)
    explored = 0
    while max_commits is None or explored < max_commits:
        i = explored
        place = Place(workdir / "lockstep")
        reset_dir(place.root)
        copy_tree(crashed.crashed.root, place.root)
        marker = workdir / "first-stopped"
        marker.unlink(missing_ok=True)
        gate_read, gate_write = os.pipe()

        def first(
            commit: int = i, here: Place = place, read: int = gate_read, write: int = gate_write, mark: Path = marker
        ) -> int:
            os.close(write)
            return _resume(chaos, here, crashed.acknowledged, (commit, mark, read))

        holder = fork_child(first)
        os.close(gate_read)
        ended = stopped_or_ended(marker, holder)
        point, variant = f"{point_id}/commit[{i}]", "lockstep"
        if ended is not None:  # the resume finished before an i-th commit: every commit has been explored
            os.close(gate_write)
            if ended != proceeded:
                run.add(point, variant, "resume-failed", f"the resumer ended with {ended.describe()}")
            break
        run.explore_at(point)
        explored += 1
        second = run_in_child(lambda here=place: _resume(chaos, here, crashed.acknowledged))
        os.close(gate_write)  # the first goes on
        first_ended = wait_child(holder)
        if first_ended != proceeded:
            run.add(
                point,
                variant,
                "lease",
                f"the first resumer, stopped after commit {i}, ended with {first_ended.describe()}",
            )
        if second != refused:
            detail = f"a second resumer while the first held the session ended with {second.describe()}, not exit 17"
            run.add(point, variant, "lease", detail)
        if first_ended == proceeded:
            try:
                found = found_on(chaos, place)
            except Exception as exc:  # two writers forked the session: it no longer loads
                run.add(point, variant, "resume-failed", f"the session does not load: {type(exc).__name__}: {exc}")
                continue
            run.judged(point, variant, _as_golden(golden, found, read_files(place.workspace), crashed.stored.results))
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
