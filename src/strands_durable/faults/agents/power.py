"""Power loss under a plain `strands.Agent` with `DurableSessionManager`: no acknowledged turn is lost.

The expenses conversation (faults/agents/examples.py) runs through recorded file operations; the disk is then
rebuilt as a power cut may leave it before every fsync (the power class's disk model, faults/classes/) and each
distinct state is opened and checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from strands_durable.faults.agents.examples import PROMPTS, SESSION_ID, World, make_model, make_tools
from strands_durable.faults.kit.findings import INVALID_HISTORY, Finding
from strands_durable.faults.kit.scratch import reset_dir


@dataclass
class PowerReport:
    states: int = 0
    resumed: int = 0
    problems: list[Finding] = field(default_factory=list)


def explore_power(base: Path) -> PowerReport:
    """Run the conversation through recorded file operations, then rebuild the disk as a power cut may leave it
    before every fsync (faults/classes/power.py's disk model) and check each state: the session opens, its stored
    history is valid, and every prompt whose `agent(...)` call had returned is answered in it."""
    from strands import Agent

    from strands_durable.faults.classes.power import (
        DiskModel,
        crash_states,
        materialize,
        persistence_points,
    )
    from strands_durable.faults.classes.recording import RecordingFileOps
    from strands_durable.faults.kit.stores import file_store
    from strands_durable.sdk import DurableSessionManager

    world = World(base)
    reset_dir(base)
    recorder = RecordingFileOps()
    agent = Agent(
        model=make_model(world, "golden"),
        tools=make_tools(world, "golden"),
        callback_handler=None,
        session_manager=DurableSessionManager(SESSION_ID, store=file_store(world.sessions, fileops=recorder)),
    )
    for index, prompt in enumerate(PROMPTS):
        agent(prompt)
        recorder.mark(("acknowledged", index + 1))
    log = list(recorder.log)
    points = set(persistence_points(log))
    model = DiskModel(base)
    acknowledged = 0
    report = PowerReport()
    seen: set[str] = set()
    for index in range(len(log) + 1):
        if index in points:
            for state in crash_states(model, index):
                digest = state.digest(base)
                if digest in seen:
                    continue
                seen.add(digest)
                report.states += 1
                materialize(state, base)
                problems, opened = _judge_state(world.sessions, acknowledged)
                report.problems += [
                    Finding(rule, detail, "power", f"op[{index}]", state.kind) for rule, detail in problems
                ]
                report.resumed += opened
        if index == len(log):
            break
        op = log[index]
        if op.kind == "mark" and isinstance(op.info, tuple) and op.info[0] == "acknowledged":
            acknowledged = int(op.info[1])
        model.apply(index, op)
    return report


def _judge_state(sessions: Path, acknowledged: int) -> tuple[list[tuple[str, str]], bool]:
    """(rule, detail) problems of the disk as a power cut left it, after `acknowledged` answered prompts, and
    whether the session opened: it opens (or is absent before any answer), holds every acknowledged answer and a
    valid history."""
    from strands_durable.errors import DurableError, SessionNotFound
    from strands_durable.faults.classes.power import after_power_cut
    from strands_durable.history import validate

    try:
        session = after_power_cut(sessions).open(SESSION_ID)
    except SessionNotFound:
        gone = [("data-lost", f"the session is gone after {acknowledged} answered prompts")]
        return (gone if acknowledged else []), False
    except DurableError as exc:
        return [("resume-failed", f"the session does not open: {exc}")], False
    state = session.state
    session.abandon()
    problems = []
    conv = state.conversations.get("default")
    answered = sum(1 for r in state.units.values() if r.get("status") == "completed")
    if answered < acknowledged:
        problems.append(("data-lost", f"{answered} answered prompts stored, {acknowledged} acknowledged"))
    if conv is not None and validate(conv.messages, provider="bedrock", mode="stored"):
        problems.append((INVALID_HISTORY, "the stored history is invalid"))
    return problems, True
