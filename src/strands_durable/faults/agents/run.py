"""One instrumented run of a user's Python Strands agent, Graph or Swarm: the factory `build_agent(ctx)` resolved,
the crash-point bus of the run (`Run`: records point ids, crashes in process or by SIGKILL at one, counts each
request at the model and each real tool execution, and keeps the tools' workspace as it was when the model was
first asked with an "outcome unknown" result), the crash hooks at every SDK hook (of each node agent, and before
and after each node), and `point(name)` for a tool body. faults/agents/engine.py drives these runs;
faults/kit/judge.py judges them.

Each agent of a run has a key: "" for a plain Agent, its node id for a node of a Graph or Swarm. A tool call is
named by `call_key(agent, toolUseId)`, and a node agent's crash points by the prefix `node:<id>/`."""

from __future__ import annotations

import copy
import importlib
import itertools
import os
import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strands_durable.crashpoints import Commit, CrashPoint, CrashPoints, InjectedCrash, ToolCall
from strands_durable.errors import UsageError
from strands_durable.faults.kit.orders import BatchLog, OrderGate, ToolOrder

if TYPE_CHECKING:
    from strands_durable.faults.kit.workspace import Files

STYLES = ("agent()", "re-send")
USER_SITE = "tool.point"  # a point a tool body marks with `point(name)`
MULTIAGENT_END, AFTER = "multiagent/end", "store.after_commit"  # our manager has stored a Graph's or Swarm's end


@dataclass(frozen=True)
class AgentContext:
    """What `build_agent(ctx)` builds on: fresh per run (golden, each crash, each resume), the same session id."""

    storage_dir: Path
    workspace: Path
    session_id: str
    phase: str = "golden"  # golden | crash | resume | load


BuildAgent = Callable[[AgentContext], Any]


def resolve_factory(build_agent: BuildAgent | str) -> BuildAgent:
    """The factory itself, or the function named `module:function` (what a spawned or forked child imports)."""
    if callable(build_agent):
        return build_agent
    module_name, _, name = str(build_agent).partition(":")
    if not module_name or not name:
        raise UsageError(f"build_agent {build_agent!r}: expected a callable or 'module:function'")
    try:
        factory = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"build_agent {build_agent!r}: {exc}") from None
    if not callable(factory):
        raise UsageError(f"build_agent {build_agent!r} is not callable")
    return factory


@dataclass
class AgentChaos:
    """One conversation to explore: the factory, the prompts and how to crash."""

    build_agent: BuildAgent | str
    prompts: Sequence[str]
    session_id: str = "chaos-agent"
    max_points: int | None = None
    faults: Sequence[str] = ("interrupt",)
    cassette: Any = None  # a faults.kit.cassette.Cassette: replayed (recorded by the golden run when `record`)
    record: bool = False
    thread_timeout: float = 30.0
    tool_order: ToolOrder | None = None  # hold this turn's results in this order (faults/kit/orders.py)
    batches: BatchLog = field(default_factory=BatchLog)  # the golden run's turns of several tools, as last seen

    def __post_init__(self) -> None:
        self.factory = resolve_factory(self.build_agent)
        self.prompts = tuple(self.prompts)
        if not self.prompts or not all(isinstance(p, str) for p in self.prompts):
            raise UsageError("prompts: expected a non-empty list of strings")
        # imported here: a tool body's `point()` imports this module in any test process, chaos or not
        from strands_durable.faults.classes.registry import agent_faults

        self.faults = agent_faults(tuple(self.faults))


# -- one instrumented run --------------------------------------------------------------------------------------
_ACTIVE: list[Run] = []  # the run whose points a tool body's `point()` reaches (one run at a time per process)


def point(name: str) -> None:
    """A crash point inside a tool body (`strands_chaos.point("charged")`); nothing outside a chaos run."""
    if _ACTIVE:
        _ACTIVE[-1].user_point(name)


@dataclass(frozen=True)
class Request:
    messages: list[dict[str, Any]]
    invalid: list[str]
    agent: str = ""  # the agent's key: "" for a plain Agent, the node id in a Graph or Swarm


def call_key(agent: str, tool_use_id: str) -> str:
    """A tool call in a run: its toolUseId, prefixed by its node's id in a Graph or Swarm (ids repeat across
    nodes)."""
    return f"{agent}/{tool_use_id}" if agent else tool_use_id


def agent_of_conversation(conversation: str) -> str:
    """The agent key of one of our manager's conversation keys: `node.<id>` and its visits `node.<id>.v<n>` are the
    node's; any other key is a plain Agent's ("")."""
    if not conversation.startswith("node."):
        return ""
    return re.sub(r"\.v\d+$", "", conversation[len("node.") :])


class Run:
    """The crash-point bus of one run: records the points it passes, crashes at the point `crash_at` names (after
    `at_crash()`; by id, as concurrent tools may pass their points in another order than the golden run), counts
    requests at the model."""

    def __init__(
        self,
        crash_at: str | None = None,
        *,
        kill: bool = False,
        at_crash: Callable[[], None] | None = None,
        workspace: Path | None = None,
    ):
        self.bus = CrashPoints()
        self.points: list[CrashPoint] = []
        self.requests: list[Request] = []
        self.crash_at = crash_at
        self.kill = kill
        self.at_crash = at_crash
        self.fired: str | None = None
        self.executions: list[str] = []  # call keys, each time a tool body really starts
        self.finished: set[str] = set()  # call keys of tool bodies that ran to their end
        self.spans: list[tuple[float, float]] = []  # (start, end) of each finished execution
        self.committed: set[str] = set()  # call keys our manager committed a result for (`tool.committed`)
        self.ended = 0  # Graph or Swarm invocations whose end our manager stored
        self.workspace = workspace  # the tools' workspace of this run (None: not watched)
        self.at_unknown: Files | None = None  # the workspace when the model was first asked with an unknown outcome
        self.batches = BatchLog()  # the turns of several tools this run saw (faults/kit/orders.py)
        self._lock = threading.Lock()
        self._user: Counter[str] = Counter()
        self.bus.subscribe(self.observe)

    def observe(self, crash_point: CrashPoint) -> None:
        with self._lock:
            self.points.append(crash_point)
            if crash_point.site == "tool.committed" and isinstance(crash_point, ToolCall):
                agent = agent_of_conversation(crash_point.conversation)
                self.committed.add(call_key(agent, crash_point.tool_use_id))
            if isinstance(crash_point, Commit) and (crash_point.path, crash_point.site) == (MULTIAGENT_END, AFTER):
                self.ended += 1
            fire = crash_point.id == self.crash_at and self.fired is None
            if fire:
                self.fired = crash_point.id
                if self.at_crash is not None:
                    self.at_crash()  # the disk as the dead process leaves it, before any other thread moves on
        if fire:
            if self.kill:
                os.kill(os.getpid(), signal.SIGKILL)
            raise InjectedCrash(crash_point)

    def asked(self, request: Request) -> None:
        """A request reached the model. The first that carries an "outcome unknown" result is where the run leaves
        the golden run's path: the workspace is kept as it is then (what follows is not compared)."""
        from strands_durable.faults.kit.judge import unknown_outcomes
        from strands_durable.faults.kit.workspace import read_files

        with self._lock:
            self.requests.append(request)
            if self.workspace is not None and self.at_unknown is None and unknown_outcomes(request.messages):
                self.at_unknown = read_files(self.workspace)

    @property
    def concurrent(self) -> bool:
        """Whether two tool executions of this run overlapped in time (the tools really ran in parallel)."""
        return spans_overlap(self.spans)

    def user_point(self, name: str) -> None:
        self.bus.raise_if_crashed()
        with self._lock:
            occurrence = self._user[name]
            self._user[name] += 1
        try:
            self.observe(CrashPoint(USER_SITE, f"user:{name}", occurrence))
        except InjectedCrash as crash:
            self.bus.crashed = crash
            raise

    def __enter__(self) -> Run:
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _ACTIVE.remove(self)


def spans_overlap(spans: Iterable[tuple[float, float]]) -> bool:
    """Whether two of the (start, end) spans overlap in time."""
    ordered = sorted(spans)
    return any(later[0] < earlier[1] for earlier, later in itertools.pairwise(ordered))


def crash_hooks(bus: CrashPoints, prefix: str = "") -> Any:
    """A HookProvider emitting a crash point at every SDK hook of one agent; MessageAdded before and after the
    session manager (HookOrder), so the same points exist whichever manager stores the session. `prefix` names a
    node's agent in a Graph or Swarm (`node:<id>/`)."""
    from strands.hooks import (
        AfterInvocationEvent,
        AfterModelCallEvent,
        AfterToolCallEvent,
        BeforeInvocationEvent,
        BeforeModelCallEvent,
        BeforeToolCallEvent,
        HookProvider,
        MessageAddedEvent,
    )
    from strands.hooks.registry import HookOrder

    def at(site: str, path_of: Callable[[Any], str]) -> Callable[[Any], None]:
        return lambda event: bus.emit(site, prefix + path_of(event))

    def tool_path(event: Any) -> str:
        return f"hook/tool:{event.tool_use['name']}:{event.tool_use['toolUseId']}"

    def message_path(event: Any) -> str:
        return f"hook/message:{event.message.get('role')}"

    class CrashHooks(HookProvider):
        def register_hooks(self, registry: Any, **kwargs: Any) -> None:
            registry.add_callback(BeforeInvocationEvent, at("unit.before", lambda e: "hook/invocation"))
            registry.add_callback(AfterInvocationEvent, at("unit.after", lambda e: "hook/invocation"))
            registry.add_callback(BeforeModelCallEvent, at("model.before", lambda e: "hook"))
            registry.add_callback(AfterModelCallEvent, at("model.answered", lambda e: "hook"))
            registry.add_callback(MessageAddedEvent, at("store.before_commit", message_path), order=HookOrder.SDK_FIRST)
            registry.add_callback(MessageAddedEvent, at("store.after_commit", message_path), order=HookOrder.SDK_LAST)
            registry.add_callback(BeforeToolCallEvent, at("tool.before", tool_path))
            registry.add_callback(AfterToolCallEvent, at("tool.executed", tool_path))

    return CrashHooks()


def node_hooks(bus: CrashPoints) -> Any:
    """A HookProvider on a Graph or Swarm emitting a crash point before and after each node."""
    from strands.hooks import AfterNodeCallEvent, BeforeNodeCallEvent, HookProvider

    class NodeHooks(HookProvider):
        def register_hooks(self, registry: Any, **kwargs: Any) -> None:
            registry.add_callback(BeforeNodeCallEvent, lambda e: bus.emit("unit.before", f"hook/node:{e.node_id}"))
            registry.add_callback(AfterNodeCallEvent, lambda e: bus.emit("unit.after", f"hook/node:{e.node_id}"))

    return NodeHooks()


def agents_of(target: Any) -> dict[str, Any]:
    """The agents of what a factory built, by key: a plain Agent's is "", a Graph's or Swarm's node agents' their
    node ids. Anything else is a usage error naming what was built."""
    from strands import Agent

    if isinstance(target, Agent):
        return {"": target}
    nodes = getattr(target, "nodes", None)
    if multi_agent(target) and isinstance(nodes, dict):
        found = {node_id: node.executor for node_id, node in nodes.items()}
        odd = [node_id for node_id, agent in found.items() if not isinstance(agent, Agent)]
        if not odd:
            return found
        raise UsageError(f"build_agent: node {odd[0]!r} runs a {type(found[odd[0]]).__name__}, not an Agent")
    raise UsageError(f"build_agent must return a strands Agent, Graph or Swarm, not a {type(target).__name__}")


def multi_agent(target: Any) -> bool:
    """Whether a factory built a Graph or Swarm (its prompts are tasks) rather than a plain Agent."""
    from strands.multiagent.graph import Graph
    from strands.multiagent.swarm import Swarm

    return isinstance(target, (Graph, Swarm))


def session_manager_of(target: Any) -> Any:
    """The session manager of an Agent, Graph or Swarm (None when it has none)."""
    return getattr(target, "session_manager" if multi_agent(target) else "_session_manager", None)


def build(chaos: AgentChaos, ctx: AgentContext, run: Run | None) -> Any:
    """The user's agent, Graph or Swarm, instrumented: crash hooks on every agent (and before and after every
    node), our manager's commits on the run's bus, each agent's model (or the cassette) counting and validating
    every request, each tool counting its executions."""
    target = chaos.factory(ctx)
    agents = agents_of(target)
    if run is None:
        return target
    if multi_agent(target):
        target.hooks.add_hook(node_hooks(run.bus))
    elif ctx.phase in ("golden", "crash"):  # a resume runs as timing gives: what the crash left decides its order
        log = BatchLog()
        crashed = lambda: run.fired is not None or run.bus.crashed is not None  # noqa: E731
        target.hooks.add_hook(OrderGate(chaos.tool_order, log, stopped=crashed, timeout=chaos.thread_timeout))
        run.batches = log
        if ctx.phase == "golden":
            chaos.batches = log
    manager = session_manager_of(target)
    if isinstance(getattr(manager, "crash_points", None), CrashPoints):
        manager.crash_points = run.bus  # a DurableSessionManager: every store commit is a point too
    for key, agent in agents.items():
        agent.hooks.add_hook(crash_hooks(run.bus, f"node:{key}/" if key else ""))
        model = agent.model
        if chaos.cassette is not None:
            recording = chaos.record and ctx.phase == "golden"
            name = key or agent.agent_id
            model = chaos.cassette.recording_model(model, name) if recording else None
            model = model or _replaying(chaos.cassette, name)
        agent.model = _counting(model, run, key)
        registry = agent.tool_registry.registry
        for name, tool in list(registry.items()):
            registry[name] = _counted_tool(tool, run, key)
    return target


def _replaying(cassette: Any, agent_id: str) -> Any:
    """The cassette's answers; a request after a synthesized "outcome unknown" result (which the recording never
    saw) is answered off the record, as spec workflows are (`faults.kit.cassette.off_the_record`), by a
    deterministic model that calls no tool: what follows such a point is held to validity, completion and at most
    one effect, not to the golden run."""
    from strands_durable.faults.kit.cassette import off_the_record
    from strands_durable.models.synthetic import SyntheticModel

    fallback = SyntheticModel(max_tool_rounds=0)
    return off_the_record(cassette.replaying_model(agent_id), fallback, after_unknown_only=True)


def _counted_tool(tool: Any, run: Run, agent: str) -> Any:
    """A shallow copy of `tool` (its marks, e.g. `non_idempotent`, kept) recording each real execution: its start,
    and, when it ran to its end, its span in time."""
    counted = copy.copy(tool)
    inner = tool.stream

    async def stream(tool_use: Any, invocation_state: Any, **kwargs: Any) -> Any:
        key = call_key(agent, tool_use["toolUseId"])
        run.executions.append(key)
        start = time.monotonic()
        async for event in inner(tool_use, invocation_state, **kwargs):
            if isinstance(event, dict) and event.get("type") == "tool_result":  # the last: the body has ended
                run.spans.append((start, time.monotonic()))
                run.finished.add(key)
            yield event

    counted.stream = stream
    return counted


def _counting(model: Any, run: Run, agent: str = "") -> Any:
    """A shallow copy of `model` (same class, so managers derive the same provider profile) whose `stream`
    records each normalised request and the provider rules it breaks, as asked by the agent `agent` (its key)."""
    from strands_durable.history import validate
    from strands_durable.models.request import normalise_messages
    from strands_durable.sdk.profiles import profile_for_model

    counted = copy.copy(model)
    inner = model.stream
    profile = profile_for_model(model)

    async def stream(messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
        plain = normalise_messages(messages)
        broken = validate(plain, provider=profile, mode="request", tools_configured=bool(tool_specs))
        run.asked(Request(plain, [f"{v.rule}: {v.message}" for v in broken], agent))
        async for event in inner(messages, tool_specs, system_prompt, **kwargs):
            yield event

    counted.stream = stream
    return counted
