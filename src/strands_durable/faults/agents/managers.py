"""Kill a plain `strands.Agent` at every SDK hook and store commit, resume it as users do, and judge the result.

The same harness drives any session manager a factory builds (ours, or the SDK's `FileSessionManager` for
comparison): a three-prompt expenses conversation whose model (a script, recorded and validated at every
request) calls tools in parallel under the default `ConcurrentToolExecutor`. For each crash point of the golden
run a forked child runs the conversation and is SIGKILLed there (or raises `InjectedCrash` in process); fresh
children then restore through a fresh factory call and finish, either with `agent()` when something is pending
or by re-sending the interrupted prompt. Judged per point: every request valid, final history identical to the
golden run (`history.normalize`), no tool whose result was stored re-run, no expense recorded twice, no stored
model turn requested again; the golden run must show tools running concurrently.

`python -m strands_durable.faults.agents.managers [--every N]` prints the comparison table of docs/python-agents.md;
`--rules` prints the table of docs/chaos-plugin.md: the same comparison on a ledger conversation judged by
`strands_chaos.run_agent`'s engine (faults/agents/engine.py), which also provides the crash hooks and the resume
decisions used here.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoint, CrashPoints, InjectedCrash
from strands_durable.faults.agents.engine import answered, pending
from strands_durable.faults.agents.place import copy_tree
from strands_durable.faults.agents.run import AgentChaos, AgentContext, crash_hooks
from strands_durable.faults.kit.forking import run_in_child
from strands_durable.faults.kit.golden import AgentGoldenRun, dump_points, load_points
from strands_durable.faults.kit.scratch import reset_dir, write_scratch
from strands_durable.store.fileops import FileOps

_SCRATCH = FileOps()  # the harness's own files (ledger, requests, copies): not session data, no fsync

SESSION_ID = "expenses-1"
PROMPTS = ("Record the taxi and the hotel.", "Now the dinner and the museum.", "What is the total?")
SCRIPT: list[Any] = [
    [
        {"name": "add_expense", "input": {"item": "taxi", "amount": 12}},
        {"name": "add_expense", "input": {"item": "hotel", "amount": 140}},
    ],
    "Recorded the taxi and the hotel.",
    [
        {"name": "add_expense", "input": {"item": "dinner", "amount": 35}},
        {"name": "add_expense", "input": {"item": "museum", "amount": 15}},
        {"name": "lookup_rate", "input": {"currency": "EUR"}},
    ],
    [{"name": "total_expenses", "input": {}}],
    "Recorded the dinner and the museum.",
    [{"name": "total_expenses", "input": {}}],
    "The total is 202.",
]
TOOL_SECONDS = 0.02  # long enough for parallel calls to overlap measurably
MANAGERS = ("durable", "sdk-file")
STYLES = ("agent()", "re-send")


# -- the conversation's world: tools and a model that write what they did to files outside the session --------
@dataclass
class World:
    """Files recording what happened, shared by the golden run, the crashed child and the resumes."""

    root: Path

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    @property
    def ledger(self) -> Path:
        return self.root / "ledger.jsonl"  # one line per tool execution (its side effect)

    @property
    def requests(self) -> Path:
        return self.root / "requests.jsonl"  # one line per model request

    @property
    def final(self) -> Path:
        return self.root / "final.json"


def _append(path: Path, record: dict[str, Any]) -> None:
    """One JSON line, appended through the file-operations layer (a killed process's append reaches the file)."""
    handle = _SCRATCH.open_append(path)
    try:
        handle.append((json.dumps(record) + "\n").encode())
    finally:
        handle.close()


def _remove(path: Path) -> None:
    if path.exists():
        _SCRATCH.remove_tree(path)


def read_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def make_tools(world: World, phase: str) -> list[Any]:
    from strands import tool

    def effect(tool_use_id: str, name: str, detail: dict[str, Any]) -> None:
        start = time.monotonic()
        time.sleep(TOOL_SECONDS)
        _append(
            world.ledger,
            {
                "id": tool_use_id,
                "tool": name,
                "detail": detail,
                "phase": phase,
                "start": start,
                "end": time.monotonic(),
            },
        )

    @tool(context=True)
    def add_expense(item: str, amount: float, tool_context: Any) -> str:
        """Record one expense."""
        effect(tool_context.tool_use["toolUseId"], "add_expense", {"item": item, "amount": amount})
        return f"recorded {item}: {amount}"

    @tool(context=True)
    def lookup_rate(currency: str, tool_context: Any) -> str:
        """Look up an exchange rate."""
        effect(tool_context.tool_use["toolUseId"], "lookup_rate", {"currency": currency})
        return f"1 {currency} = 1.0"

    @tool(context=True)
    def total_expenses(tool_context: Any) -> str:
        """Sum the recorded expenses."""
        effect(tool_context.tool_use["toolUseId"], "total_expenses", {})
        return "202"

    return [add_expense, lookup_rate, total_expenses]


def make_model(world: World, phase: str, script: list[Any] | None = None) -> Any:
    """The script, recording every request (normalised) with its validity under the Bedrock profile."""
    from strands_durable.history import validate
    from strands_durable.models.request import normalise_messages
    from strands_durable.models.scripted import ScriptedModel
    from strands_durable.models.wrapping import WrappedModel

    class RecordingModel(WrappedModel):
        async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kw: Any) -> Any:
            plain = normalise_messages(messages)
            violations = validate(plain, provider="bedrock", mode="request", tools_configured=bool(tool_specs))
            record = {"phase": phase, "messages": plain, "invalid": [v.rule for v in violations]}
            _append(world.requests, record)
            async for event in super().stream(messages, tool_specs, system_prompt, **kw):
                yield event

    return RecordingModel(ScriptedModel(script or SCRIPT))


# -- crash points: the SDK's hooks (for any manager, faults/agents/engine.py) and our store and tool sites ---------
def build_agent(manager: str, world: World, phase: str, crash: CrashPoints) -> Any:
    """The user's factory: a plain Agent with the default concurrent executor and the given manager."""
    from strands import Agent

    if manager == "durable":
        from strands_durable.sdk import DurableSessionManager

        session_manager: Any = DurableSessionManager(SESSION_ID, world.sessions, crash_points=crash)
    else:
        from strands.session.file_session_manager import FileSessionManager

        session_manager = FileSessionManager(SESSION_ID, storage_dir=str(world.sessions))
    return Agent(
        model=make_model(world, phase),
        tools=make_tools(world, phase),
        system_prompt="You record expenses.",
        callback_handler=None,
        session_manager=session_manager,
        hooks=[crash_hooks(crash)],
    )


# -- one run --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Crash:
    """Where to crash: the golden run's index-th crash point, killed (SIGKILL) or raised in process."""

    index: int
    mode: str = "kill"  # kill | raise


def _crasher(crash: Crash | None) -> CrashPoints:
    bus = CrashPoints()
    seen = [0]
    if crash is None:
        return bus

    def maybe_crash(point: CrashPoint) -> None:
        seen[0] += 1
        if seen[0] - 1 == crash.index:
            if crash.mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise InjectedCrash(point)

    bus.subscribe(maybe_crash)
    return bus


def run_conversation(
    manager: str, world: World, crash: Crash | None = None, points: list[CrashPoint] | None = None
) -> int:
    """Run the three prompts in a fresh agent; `points` collects the crash points (the golden run)."""
    bus = _crasher(crash)
    if points is not None:
        bus.subscribe(points.append)
    agent = build_agent(manager, world, "crash" if crash else "golden", bus)
    for index, prompt in enumerate(PROMPTS):
        agent(prompt)
        _append(world.root / "acknowledged.jsonl", {"prompt": index})
    write_scratch(world.final, json.dumps(list(agent.messages)).encode())
    return 0


def resume_conversation(manager: str, world: World, style: str) -> int:
    """A user after the crash: a fresh agent from the factory; the interrupted prompt finished by `agent()`
    (when something is pending) or re-sent; then the remaining prompts."""
    acknowledged = {line["prompt"] for line in read_lines(world.root / "acknowledged.jsonl")}
    agent = build_agent(manager, world, "resume", CrashPoints())
    start = min(set(range(len(PROMPTS))) - acknowledged, default=len(PROMPTS))
    if start < len(PROMPTS):
        interrupted = PROMPTS[start]
        if style == "agent()" and pending(agent):
            agent()
        elif not answered(agent.messages, interrupted):
            agent(interrupted)
    for prompt in PROMPTS[start + 1 :]:
        agent(prompt)
    write_scratch(world.final, json.dumps(list(agent.messages)).encode())
    return 0


# -- what was stored at the crash -----------------------------------------------------------------------------
def stored_at_crash(manager: str, world: World) -> tuple[list[dict[str, Any]], set[str]]:
    """The messages the session held when the crash struck, and the toolUseIds whose results it held."""
    from strands_durable.models.request import normalise_messages

    if manager == "durable":
        from strands_durable.errors import SessionNotFound
        from strands_durable.store import LocalStore

        try:
            state = LocalStore(world.sessions).load(SESSION_ID)
        except SessionNotFound:
            return [], set()
        conv = state.conversations.get("default")
        if conv is None:
            return [], set()
        messages, journal = list(conv.messages), set(conv.tool_results)
    else:
        directory = world.sessions / f"session_{SESSION_ID}" / "agents" / "agent_default" / "messages"
        files = (
            sorted(directory.glob("message_*.json"), key=lambda p: int(p.stem.split("_")[1]))
            if directory.exists()
            else []
        )
        messages = [json.loads(p.read_text())["message"] for p in files]
        journal = set()
    for message in messages:
        for block in message.get("content", ()):
            if "toolResult" in block:
                journal.add(block["toolResult"]["toolUseId"])
    return normalise_messages(messages), journal


# -- judging --------------------------------------------------------------------------------------------------
@dataclass
class Verdict:
    point: str
    style: str
    resumed: bool = True
    invalid_requests: int = 0
    identical: bool = True
    duplicate_effects: int = 0
    rerun_stored_tools: int = 0
    rerun_unrecorded_tools: int = 0  # finished before the crash, result not stored: at-least-once, allowed
    rerequested_turns: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            self.resumed
            and self.identical
            and not self.invalid_requests
            and self.duplicate_effects <= self.rerun_unrecorded_tools
            and not self.rerun_stored_tools
            and not self.rerequested_turns
        )


def _effect_key(line: dict[str, Any]) -> str:
    return f"{line['tool']}:{json.dumps(line['detail'], sort_keys=True)}"


def overlapping(ledger: list[dict[str, Any]]) -> bool:
    """Whether two tool executions overlapped in time (tools really ran concurrently)."""
    spans = sorted((line["start"], line["end"]) for line in ledger)
    return any(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))


def warm_imports() -> None:
    """Import what the children use once, in the parent: each forked child then starts warm (~20 ms, not ~1 s)."""
    import strands.session.file_session_manager  # noqa: F401

    import strands_durable.history
    import strands_durable.models.scripted
    import strands_durable.models.wrapping
    import strands_durable.sdk  # noqa: F401


def golden_run(manager: str, base: Path) -> AgentGoldenRun:
    """The uninterrupted conversation in a child: its points, final messages (`comparable`), effects, requests."""
    warm_imports()
    world = World(base / f"golden-{manager}")
    reset_dir(world.root)
    points_file = world.root / "points.json"

    def body() -> int:
        points: list[CrashPoint] = []
        run_conversation(manager, world, None, points)
        write_scratch(points_file, dump_points(points))
        return 0

    exit_ = run_in_child(body)
    if exit_.code != 0:
        raise RuntimeError(f"the golden run of {manager} failed: {exit_.describe()}")
    ledger = read_lines(world.ledger)
    return AgentGoldenRun(
        target=manager,
        workdir=world.root,
        points=load_points(points_file.read_text()),
        comparable=json.loads(world.final.read_text()),
        effects=Counter(_effect_key(line) for line in ledger),
        model_requests=len(read_lines(world.requests)),
        concurrent=overlapping(ledger),
    )


def explore_point(manager: str, golden: AgentGoldenRun, index: int, base: Path, mode: str = "kill") -> list[Verdict]:
    """Crash at the golden run's `index`-th point, then judge both resume styles from copies of the crashed disk."""
    from strands_durable.history import normalize

    point = golden.points[index].id
    crashed = World(base / f"{manager}-{index}")
    reset_dir(crashed.root)
    run_in_child(lambda: run_conversation(manager, crashed, Crash(index, mode)))
    stored, stored_results = stored_at_crash(manager, crashed)
    verdicts = []
    for style in STYLES:
        world = World(crashed.root.with_name(f"{crashed.root.name}-{'agent' if style == 'agent()' else 'resend'}"))
        copy_tree(crashed.root, world.root)
        before = len(read_lines(world.ledger))
        exit_ = run_in_child(lambda world=world, style=style: resume_conversation(manager, world, style))
        verdict = Verdict(point, style)
        if exit_.code != 0 or not world.final.exists():
            verdict.resumed = False
            verdict.notes.append(f"resume: {exit_.describe()}")
        requests = read_lines(world.requests)
        verdict.invalid_requests = sum(1 for r in requests if r["invalid"])
        ledger = read_lines(world.ledger)
        effects = Counter(_effect_key(line) for line in ledger)
        verdict.duplicate_effects = sum(max(0, n - golden.effects.get(k, 0)) for k, n in effects.items())
        verdict.rerun_stored_tools = sum(1 for line in ledger[before:] if line["id"] in stored_results)
        finished = {line["id"] for line in ledger[:before]}
        verdict.rerun_unrecorded_tools = sum(
            1 for line in ledger[before:] if line["id"] in finished and line["id"] not in stored_results
        )
        for request in (r for r in requests if r["phase"] == "resume"):
            n = len(request["messages"])
            if n < len(stored) and stored[n]["role"] == "assistant" and request["messages"] == stored[:n]:
                verdict.rerequested_turns += 1
        if verdict.resumed:
            final = json.loads(world.final.read_text())
            verdict.identical = normalize(final) == normalize(golden.comparable)
        else:
            verdict.identical = False
        verdicts.append(verdict)
    return verdicts


@dataclass
class Report:
    manager: str
    golden: AgentGoldenRun
    verdicts: list[Verdict]

    def counts(self, style: str) -> dict[str, int]:
        mine = [v for v in self.verdicts if v.style == style]
        return {
            "points": len(mine),
            "invalid request": sum(1 for v in mine if v.invalid_requests),
            "effect twice": sum(1 for v in mine if v.duplicate_effects),
            "finished tool re-run": sum(1 for v in mine if v.rerun_stored_tools or v.rerun_unrecorded_tools),
            "stored tool re-run": sum(1 for v in mine if v.rerun_stored_tools),
            "stored turn re-requested": sum(1 for v in mine if v.rerequested_turns),
            "history identical": sum(1 for v in mine if v.identical),
            "not resumed": sum(1 for v in mine if not v.resumed),
            "ok": sum(1 for v in mine if v.ok),
        }


def explore(manager: str, base: Path, *, every: int = 1, mode: str = "kill") -> Report:
    golden = golden_run(manager, base)
    verdicts: list[Verdict] = []
    for index in range(0, len(golden.points), every):
        verdicts.extend(explore_point(manager, golden, index, base, mode))
        for name in (f"{manager}-{index}", f"{manager}-{index}-agent", f"{manager}-{index}-resend"):
            _remove(base / name)
    return Report(manager, golden, verdicts)


def hook_points_only(report: Report) -> Report:
    """The verdicts at the SDK-hook points (the points every manager has), for a like-for-like table."""
    hook = [v for v in report.verdicts if v.point.startswith("hook")]
    return Report(report.manager, report.golden, hook)


def table(reports: list[Report]) -> str:
    header = (
        "| manager | resume | points | invalid request | effect twice | finished tool re-run | stored tool re-run | "
        "stored turn re-requested | history identical | not resumed | all checks pass |"
    )
    lines = [header, "|" + "---|" * 11]
    for report in reports:
        for style in STYLES:
            c = report.counts(style)
            lines.append(
                f"| {report.manager} | {style} | {c['points']} | {c['invalid request']} | {c['effect twice']} | "
                f"{c['finished tool re-run']} | {c['stored tool re-run']} | {c['stored turn re-requested']} | "
                f"{c['history identical']} | {c['not resumed']} | {c['ok']} |"
            )
    return "\n".join(lines)


# -- the run_agent comparison: a ledger conversation judged by faults/agents/engine.py's rules --------------------
LEDGER_SCRIPT: list[Any] = [
    [{"name": "pay", "input": {"item": "taxi", "amount": 12}}, {"name": "note", "input": {"item": "hotel"}}],
    "Paid the taxi, noted the hotel.",
    [{"name": "pay", "input": {"item": "dinner", "amount": 35}}],
    "Paid the dinner.",
]
LEDGER_PROMPTS = ("Pay the taxi, note the hotel.", "Now pay the dinner.")


def ledger_tools(ctx: AgentContext) -> list[Any]:
    """`pay` appends to the workspace's ledger (non-idempotent); `note` writes one file per item (idempotent)."""
    from strands import tool

    from strands_durable.runner.marks import non_idempotent

    @non_idempotent
    @tool
    def pay(item: str, amount: float) -> str:
        """Pay for an item."""
        _append(ctx.workspace / "ledger.jsonl", {"item": item, "amount": amount})
        return f"paid {item}"

    @tool
    def note(item: str) -> str:
        """Write a note about an item."""
        write_scratch(ctx.workspace / f"note-{item}.txt", item.encode())
        return f"noted {item}"

    return [pay, note]


def ledger_agent(ctx: AgentContext, manager: Any = "durable") -> Any:
    """The user's factory of the comparison: the ledger tools, a script, ours ("durable", or a subclass of
    DurableSessionManager: the self-tests' planted bugs) or the SDK's FileSessionManager ("sdk-file")."""
    from strands import Agent

    from strands_durable.models.scripted import ScriptedModel

    if manager == "sdk-file":
        from strands.session.file_session_manager import FileSessionManager

        session_manager: Any = FileSessionManager(ctx.session_id, storage_dir=str(ctx.storage_dir))
    else:
        from strands_durable.sdk import DurableSessionManager

        manager_class = DurableSessionManager if manager == "durable" else manager
        session_manager = manager_class(ctx.session_id, ctx.storage_dir)
    model = ScriptedModel(LEDGER_SCRIPT)
    return Agent(model=model, tools=ledger_tools(ctx), callback_handler=None, session_manager=session_manager)


def rules_table(base: Path, faults: tuple[str, ...] = ("interrupt",)) -> str:
    """Ours vs FileSessionManager on the ledger conversation: points, passed, failed by rule (run_agent's judge)."""
    from strands_durable.faults.agents.engine import explore as explore_agent
    from strands_durable.faults.agents.engine import rule_counts

    rows = []
    rules: list[str] = []
    for manager in MANAGERS:
        chaos = AgentChaos(lambda ctx, m=manager: ledger_agent(ctx, m), LEDGER_PROMPTS, faults=faults)
        _, outcomes = explore_agent(chaos, base / manager)
        counts = rule_counts(outcomes)
        rules += [r for r in sorted(counts) if r not in rules]
        rows.append((manager, len(outcomes), sum(o.ok for o in outcomes), counts))
    lines = ["| manager | points | passed | " + " | ".join(f"failed: {r}" for r in rules) + " |"]
    lines.append("|" + "---|" * (3 + len(rules)))
    for manager, points, passed, counts in rows:
        cells = " | ".join(str(counts.get(r, 0)) for r in rules)
        lines.append(f"| {manager} | {points} | {passed} | {cells} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="explore every N-th crash point")
    parser.add_argument("--rules", action="store_true", help="the run_agent table: points, passed, failed by rule")
    args = parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="strands-agents-faults-"))
    if args.rules:
        try:
            print(rules_table(base))
        finally:
            _remove(base)
        return 0
    try:
        reports = []
        for manager in MANAGERS:
            full = explore(manager, base, every=args.every)
            reports.append(hook_points_only(full))
            if manager == "durable":
                reports.append(Report("durable (all points)", full.golden, full.verdicts))
            print(f"{manager}: {len(full.golden.points)} crash points, concurrent tools: {full.golden.concurrent}")
        print(table(reports))
    finally:
        _remove(base)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


# -- power loss: no acknowledged turn is lost ------------------------------------------------------------------
@dataclass
class PowerReport:
    states: int = 0
    resumed: int = 0
    problems: list[str] = field(default_factory=list)


def explore_power(base: Path) -> PowerReport:
    """Run the conversation through recorded file operations, then rebuild the disk as a power cut may leave it
    before every fsync (faults/classes/power.py's disk model) and check each state: the session opens, its stored
    history is valid, and every prompt whose `agent(...)` call had returned is answered in it."""
    from strands import Agent

    from strands_durable.errors import DurableError, SessionNotFound
    from strands_durable.faults.classes.power import (
        DiskModel,
        after_power_cut,
        crash_states,
        materialize,
        persistence_points,
    )
    from strands_durable.faults.classes.recording import RecordingFileOps
    from strands_durable.history import validate
    from strands_durable.sdk import DurableSessionManager
    from strands_durable.store import LocalStore

    world = World(base)
    reset_dir(base)
    recorder = RecordingFileOps()
    agent = Agent(
        model=make_model(world, "golden"),
        tools=make_tools(world, "golden"),
        callback_handler=None,
        session_manager=DurableSessionManager(SESSION_ID, store=LocalStore(world.sessions, fileops=recorder)),
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
                where = f"op[{index}] {state.kind}"
                try:
                    session = after_power_cut(world.sessions).open(SESSION_ID)
                except SessionNotFound:
                    if acknowledged:
                        report.problems.append(f"{where}: the session is gone after {acknowledged} answered prompts")
                    continue
                except DurableError as exc:
                    report.problems.append(f"{where}: the session does not open: {exc}")
                    continue
                state_now = session.state
                session.abandon()
                conv = state_now.conversations.get("default")
                answered = sum(1 for r in state_now.units.values() if r.get("status") == "completed")
                if answered < acknowledged:
                    report.problems.append(f"{where}: {answered} answered prompts stored, {acknowledged} acknowledged")
                if conv is not None and validate(conv.messages, provider="bedrock", mode="stored"):
                    report.problems.append(f"{where}: the stored history is invalid")
                report.resumed += 1
        if index == len(log):
            break
        op = log[index]
        if op.kind == "mark" and isinstance(op.info, tuple) and op.info[0] == "acknowledged":
            acknowledged = int(op.info[1])
        model.apply(index, op)
    return report
