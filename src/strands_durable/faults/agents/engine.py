"""Crash any Python Strands agent, Graph or Swarm at every point, resume it as its user would, and judge the result.

The engine of `strands_chaos.run_agent` and of the docs' tables (faults/agents/managers.py). The user's factory
`build_agent(ctx)` returns their own `Agent`, `Graph` or `Swarm` (tools, hooks, session manager) on
`ctx.storage_dir`, with the tools' external state under `ctx.workspace`; the prompts are a Graph's or Swarm's
tasks. The golden run sends the prompts once and records every crash point: the SDK's hooks of every agent
(invocation start and end, model call before and after, each message added before and after the session manager
saw it, tool before and after; a node's agent's prefixed `node:<id>/`), before and after each node of a Graph or
Swarm, every store commit when the manager is a `DurableSessionManager`, and each `point(name)` a tool body calls.
Then, for each point, a run crashes there, under the registry's fault names (faults/classes/registry.py,
`AGENT_FAULTS`):

- `interrupt` (default): an `InjectedCrash` raised in process. The SDK still runs its `finally` work after it
  (other managers save at `AfterInvocationEvent`), so the storage directory and the workspace are copied at the
  instant of the crash, which is what a dead process leaves, and the resumes start from that copy. The crashed
  run's threads are waited for before anything resumes.
- `kill`: a child SIGKILLs itself there; what it left on disk is resumed. The child is spawned (a fresh
  interpreter, no threads inherited) when `build_agent` is given as "module:function", else forked.

Each crash of an Agent is resumed twice, from its own copy: by `agent()` when something is pending (else by
re-sending the interrupted prompt), and by re-sending the interrupted prompt; a Graph or Swarm is called again with
the interrupted task (what its user does). Then the remaining prompts follow, and the result is judged by the
rules of faults/kit/judge.py (`requests_valid`, `stored_tools_not_rerun`, `stored_turns_not_rerequested`, then
`same_history`, `same_state`, `same_workspace`, `same_results`, or, where a call was answered "outcome unknown"
in the stored conversation, `unknown_only_where_unstored`, `same_until_unknown`, `no_effect_twice`), each problem a
`Finding`. The instrumented run itself (the factory, the crash-point bus, the crash hooks) is faults/agents/run.py,
what it leaves on disk faults/agents/place.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import InjectedCrash
from strands_durable.faults.agents.place import (
    Found,
    Place,
    Stored,
    acknowledged,
    close_agent,
    converse,
    copy_tree,
    found_on,
    note_at_crash,
    stored_at_crash,
)
from strands_durable.faults.agents.run import (
    STYLES,
    AgentChaos,
    Request,
    Run,
    agent_of_conversation,
    build,
    call_key,
    multi_agent,
    session_manager_of,
)
from strands_durable.faults.kit import judge
from strands_durable.faults.kit.findings import Finding
from strands_durable.faults.kit.forking import run_in_child
from strands_durable.faults.kit.golden import AgentGoldenRun, golden_points
from strands_durable.faults.kit.scratch import reset_dir
from strands_durable.faults.kit.workspace import WorkspaceHistory, read_files
from strands_durable.store.fileops import FileOps

_SCRATCH = FileOps()  # the harness's own files (copies, markers): not session data, no fsync


def run_golden(chaos: AgentChaos, root: Path) -> AgentGoldenRun:
    """The uninterrupted conversation: its points, what a fresh build finds after it, workspace and requests."""
    place = Place(root / "golden").fresh()
    problems: list[Finding] = []
    results: dict[int, Any] = {}
    with Run() as run:
        target = build(chaos, place.context(chaos, "golden"), run)
        try:
            results = converse(target, chaos.prompts, place)
        except Exception as exc:
            problems.append(Finding("golden-run", f"{type(exc).__name__}: {exc}"))
        finally:
            close_agent(target)
    if chaos.record and chaos.cassette is not None:
        chaos.cassette.save()
    problems += [Finding(rule, detail) for rule, detail in judge.requests_valid(_invalid(run), "golden")]
    found = found_on(chaos, place) if not problems else Found({}, {}, {})
    return AgentGoldenRun(
        target=chaos,
        workdir=root,
        points=golden_points(run.points),
        comparable=found.windows,
        states=found.states,
        stored=found.stored,
        results=[results.get(index) for index in range(len(chaos.prompts))],
        problems=problems,
        model_requests=len(run.requests),
        turns=Counter(judge.turn_key(r.agent, r.messages) for r in run.requests),
        effects=Counter(run.executions),
        workspace=WorkspaceHistory(read_files(place.workspace)),
        concurrent=run.concurrent,
    )


def _invalid(run: Run) -> list[tuple[int, str]]:
    """(index, the first rule it broke) of each invalid request the run's model received."""
    return [(i, r.invalid[0]) for i, r in enumerate(run.requests) if r.invalid]


# -- one crash point -------------------------------------------------------------------------------------------
@dataclass
class Resumed:
    """One resume style after one crash: what it found, and what the comparison tables count (`reran`: tool bodies
    that had run to their end before the crash, their results not stored, run again: at-least-once, allowed)."""

    style: str
    findings: list[Finding]
    requests: list[Request]
    place: Place
    reran: int = 0
    unknown: list[str] = field(default_factory=list)  # call keys answered "outcome unknown" in what it left


@dataclass
class AgentOutcome:
    """One crash point: where it fired, what the crash left, and both resumes."""

    point: str
    fault: str
    fired: bool
    crashed: Place
    acknowledged: int
    stored: Stored = field(default_factory=Stored)
    resumed: list[Resumed] = field(default_factory=list)
    note: str = ""  # how the killed child ended ("killed by SIGKILL")

    @property
    def findings(self) -> list[Finding]:
        if not self.fired:
            detail = "the crashed run never reached this point" + (f" ({self.note})" if self.note else "")
            return [Finding("not-fired", detail, self.fault, self.point)]
        return [f for r in self.resumed for f in r.findings]

    @property
    def ok(self) -> bool:
        return not self.findings

    def describe(self) -> str:
        return f"crash point: {self.point} ({self.fault})\n" + "\n".join(str(f) for f in self.findings)


def crash_at(golden: AgentGoldenRun, point_id: str, fault: str = "interrupt") -> AgentOutcome:
    """Crash the conversation at the golden run's point `point_id`, then resume both ways and judge."""
    chaos: AgentChaos = golden.target
    root = golden.workdir / f"point-{golden.point(point_id).index}-{fault}"
    reset_dir(root)
    running = Place(root / "running").fresh()
    crashed = Place(root / "crashed")
    note = ""
    if fault == "kill":
        note = _killed_child(chaos, running, point_id)
        copy_tree(running.root, crashed.root)
    else:
        run = Run(point_id, at_crash=lambda: copy_tree(running.root, crashed.root))
        try:
            _crashing_run(chaos, running, run, timeout=chaos.thread_timeout)
        except Exception as exc:  # the conversation failed before it reached the point
            note = f"{type(exc).__name__}: {exc}"
    fired = crashed.root.joinpath("committed.json").exists()
    outcome = AgentOutcome(point_id, fault, fired, crashed, acknowledged(crashed) if fired else 0, note=note)
    if fired:
        outcome.stored = stored_at_crash(chaos, crashed)
        for style in styles(golden):
            outcome.resumed.append(_resume(golden, outcome, style))
    return outcome


def styles(golden: AgentGoldenRun) -> tuple[str, ...]:
    """How a user resumes: an Agent by `agent()` and by re-sending the prompt, a Graph or Swarm by calling it again
    with its task."""
    return ("re-send",) if golden.results and any(r is not None for r in golden.results) else STYLES


def _killed_child(chaos: AgentChaos, place: Place, point_id: str) -> str:
    """Run the conversation in a child SIGKILLed at the point `point_id`: spawned (a fresh interpreter that
    imports the factory) when `build_agent` was given as "module:function", else forked. How it ended."""
    if not isinstance(chaos.build_agent, str):
        return run_in_child(lambda: _crashing_run(chaos, place, Run(point_id, kill=True))).describe()
    job = {
        "build_agent": chaos.build_agent,
        "prompts": list(chaos.prompts),
        "session_id": chaos.session_id,
        "cassette": str(chaos.cassette.path) if chaos.cassette is not None else None,
        "root": str(place.root),
        "point": point_id,
    }
    search_path = os.pathsep.join(p for p in sys.path if p)  # the child imports what this process can
    child = subprocess.run(
        [sys.executable, "-m", "strands_durable.faults.agents.engine", json.dumps(job)],
        env={**os.environ, "PYTHONPATH": search_path},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if child.returncode < 0:
        return f"killed by {signal.Signals(-child.returncode).name}"
    last = (child.stderr.strip().splitlines() or [""])[-1]
    return f"exit {child.returncode}" + (f": {last}" if last else "")


def main(argv: list[str] | None = None) -> int:
    """The spawned child of the kill fault: one job (JSON) naming the factory, prompts, place and point."""
    job = json.loads((argv if argv is not None else sys.argv[1:])[0])
    cassette = None
    if job["cassette"]:
        from strands_durable.faults.kit.cassette import Cassette

        cassette = Cassette.load(Path(job["cassette"]))
    chaos = AgentChaos(job["build_agent"], job["prompts"], session_id=job["session_id"], cassette=cassette)
    return _crashing_run(chaos, Place(Path(job["root"])), Run(job["point"], kill=True))


def _crashing_run(chaos: AgentChaos, place: Place, run: Run, *, timeout: float = 30.0) -> int:
    """Converse until the crash; in process, then wait for the crashed run's threads (its tools) to end. At the
    crash, the tool results our manager committed so far go beside what the crash leaves."""
    before = set(threading.enumerate())
    copy_at_crash = run.at_crash

    def at_crash() -> None:
        note_at_crash(run, place)
        if copy_at_crash is not None:
            copy_at_crash()

    run.at_crash = at_crash
    with run:
        target = build(chaos, place.context(chaos, "crash"), run)
        try:
            converse(target, chaos.prompts, place)
        except InjectedCrash:
            pass
        except Exception:
            if run.fired is None:
                raise
    deadline = time.monotonic() + timeout
    for thread in set(threading.enumerate()) - before:
        thread.join(max(0.0, deadline - time.monotonic()))
    return 0


def _resume(golden: AgentGoldenRun, outcome: AgentOutcome, style: str) -> Resumed:
    """A user after the crash: a fresh build on a copy of what the crash left; the interrupted prompt finished by
    `agent()` (when something is pending) or re-sent (a Graph's or Swarm's task: called again); the remaining
    prompts; then the judgement."""
    chaos: AgentChaos = golden.target
    place = Place(outcome.crashed.root.with_name("agent" if style == "agent()" else "resend"))
    copy_tree(outcome.crashed.root, place.root)
    for directory in (place.storage, place.workspace):
        _SCRATCH.makedirs(directory, durable=False)
    problems: list[tuple[str, str]] = []
    start = outcome.acknowledged
    results: dict[int, Any] = {}
    with Run(workspace=place.workspace) as run:
        try:
            target = build(chaos, place.context(chaos, "resume"), run)
            if start < len(chaos.prompts):
                interrupted = chaos.prompts[start]
                if multi_agent(target):
                    results = converse(target, chaos.prompts, place, start)
                else:
                    if style == "agent()" and pending(target):
                        target()
                    elif not answered(target.messages, interrupted):
                        target(interrupted)
                    converse(target, chaos.prompts, place, start + 1)
            close_agent(target)
        except Exception as exc:
            problems.append(("resume-failed", f"{type(exc).__name__}: {exc}"))
    stored = outcome.stored
    problems += judge.requests_valid(_invalid(run), "resume")[:1]
    problems += judge.stored_tools_not_rerun(run.executions, stored.results, golden.effects)
    problems += judge.stored_turns_not_rerequested(
        ((r.agent, r.messages) for r in run.requests), stored.conversations, golden.turns
    )
    unknown: list[str] = []
    if not problems:
        try:
            found = found_on(chaos, place)
        except Exception as exc:
            problem = f"the session does not load after the resume: {type(exc).__name__}: {exc}"
            problems.append(("resume-failed", problem))
        else:
            unknown = unknown_calls(found)
            problems += _judged(golden, found, unknown, read_files(place.workspace), run, results, stored)
    findings = [Finding(rule, detail, outcome.fault, outcome.point, style) for rule, detail in problems]
    reran = sum(1 for i in run.executions if i in stored.finished and not stored.results[i])
    return Resumed(style, findings, run.requests, place, reran, unknown)


def unknown_calls(found: Found) -> list[str]:
    """The calls (call keys) answered "outcome unknown" in the stored conversations: looked for there, not in the
    loaded windows, which a conversation manager may have trimmed."""
    return [
        call_key(agent_of_conversation(key), tool_use_id)
        for key, messages in found.stored.items()
        for tool_use_id in judge.unknown_outcomes(messages)
    ]


def _judged(
    golden: AgentGoldenRun,
    found: Found,
    unknown: list[str],
    workspace: Any,
    run: Run,
    results: dict[int, Any],
    stored: Stored,
) -> list[tuple[str, str]]:
    """What the resume left, against the golden run: equal (conversations, states, workspace, each call's result),
    unless a call was answered "outcome unknown" (`unknown`); then the contract's rule for it instead: no stored
    result answered so, the conversation equal up to that result, no effect twice."""
    if not unknown:
        return [
            *judge.same_history(golden.comparable, found.windows),
            *judge.same_state(golden.states, found.states),
            *judge.same_workspace(golden.workspace.final, workspace),
            *judge.same_results(golden.results, results),
        ]
    return [
        *judge.unknown_only_where_unstored(unknown, stored.results),
        *judge.same_until_unknown(golden.stored, found.stored),
        *judge.no_effect_twice(golden.workspace.final, run.at_unknown if run.at_unknown is not None else workspace),
    ]


def pending(agent: Any) -> bool:
    """Whether the restored agent has an invocation to finish: our manager says so; for others, a history
    ending with a prompt or with a tool call."""
    manager = session_manager_of(agent)
    if callable(getattr(manager, "pending_prompt", None)):
        return manager.pending_prompt(agent.agent_id) is not None
    last = agent.messages[-1] if agent.messages else None
    return last is not None and (last["role"] == "user" or any("toolUse" in b for b in last["content"]))


def answered(messages: list[Any], prompt: str) -> bool:
    """Whether the restored history already ends with the answer to `prompt` (nothing to re-send)."""
    if not messages or messages[-1]["role"] != "assistant" or any("toolUse" in b for b in messages[-1]["content"]):
        return False
    for message in reversed(messages):
        texts = [b.get("text") for b in message["content"] if "text" in b]
        if message["role"] == "user" and texts:
            return texts == [prompt]
    return False


def explore(chaos: AgentChaos, root: Path, *, keep: bool = False) -> tuple[AgentGoldenRun, list[AgentOutcome]]:
    """The golden run, then every (sampled) point under every fault class; each point's directories are removed
    once judged unless `keep`."""
    golden = run_golden(chaos, root)
    outcomes: list[AgentOutcome] = []
    if golden.problems:
        return golden, outcomes
    for point_id in golden.sample(chaos.max_points):
        for fault in chaos.faults:
            outcome = crash_at(golden, point_id, fault)
            outcomes.append(outcome)
            if not keep:
                reset_dir(outcome.crashed.root.parent)
    return golden, outcomes


def rule_counts(outcomes: list[AgentOutcome], style: str | None = None) -> Counter[str]:
    """Failing points per rule (a point counts once per rule, whichever style broke it; with `style`, only what
    that resume style broke)."""
    counts: Counter[str] = Counter()
    for outcome in outcomes:
        counts.update({f.rule for f in outcome.findings if style is None or f.variant == style})
    return counts


if __name__ == "__main__":
    raise SystemExit(main())
