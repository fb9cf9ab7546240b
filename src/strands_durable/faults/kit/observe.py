"""The observer: what a run does, seen through its crash-point bus, and the options every fault run runs with.

A `Phase` records one run's points, the tools it executed, the tool results each commit recorded and the model
requests it made (`observe`); `arm` and `crash_at` crash it at a point and `watch_convergence` stops it where its
state equals the golden run's. `run_options` is the one
way a fault run (in process or in a child, golden, crashing or resuming) is configured: the target's model or
cassette, its tools and network cassette, its own copy of the tools' workspace, HITL defaults, a pinned creation
time and, in process, concurrent units in lockstep.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import Commit, CrashPoint, CrashPoints, InjectedCrash, ToolCall, ToolKey
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.oracle import RequestLog, counting_model
from strands_durable.faults.kit.stores import store_at
from strands_durable.faults.kit.target import PINNED_CREATED_AT, ChaosTarget
from strands_durable.runner.options import RunOptions
from strands_durable.store.base import KnownJournal
from strands_durable.store.wrapping import WrappingStore


class Converged(InjectedCrash):
    """Stops a resumed run at a checkpoint equal to the golden run's; the session is let go as after a crash."""


def observed_store(sessions: Path, *, known: KnownJournal | None = None) -> WrappingStore:
    """The run's real store (`kit/stores.py`) behind the wrapper store, whose `session` is the session it opened
    last, so subscribers can read its state."""
    return WrappingStore(store_at(sessions, known=known))


class SizedRequestLog(RequestLog):
    """Requests as (message count, the messages as sent), which the judge compares with committed turns
    (`judge.model_not_rerequested`). `RequestLog`'s digests stay empty: nothing reads a phase's, and hashing the
    whole normalised window at every model call made a request cost its window twice more."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[int, list[dict[str, Any]]]] = []

    def record(self, messages: list[dict[str, Any]]) -> None:
        self.requests.append((len(messages), [dict(m) for m in messages]))


@dataclass
class Phase:
    """What one run (golden, crashing or resuming) observed through the crash-point bus."""

    emitted: list[CrashPoint] = field(default_factory=list)
    tools_run: list[ToolCall] = field(default_factory=list)  # tool calls that executed (tool.before)
    commits: list[tuple[ToolKey, ...]] = field(default_factory=list)  # tool results each commit recorded
    requests: SizedRequestLog = field(default_factory=SizedRequestLog)
    fired: CrashPoint | None = None
    converged_at: CrashPoint | None = None
    converged_seq: int = -1  # the journal record of the converged checkpoint
    converged_digest: str = ""  # the golden checkpoint state it equals
    error: BaseException | None = None
    completed: bool = False


def run_options(
    target: ChaosTarget,
    out_dir: Path,
    bus: CrashPoints | None,
    *,
    scratch_dir: Path | None = None,
    requests: RequestLog | None = None,
    stop_requested: Callable[[], bool] | None = None,
    model_factory: Callable[..., Any] | None = None,
    off_the_record: bool = False,
    lockstep: bool = False,
) -> RunOptions:
    """Options of a fault run. The model is `model_factory` when given (a faulting model), else the target's
    (a cassette) or the synthetic one; `requests` counts what it is asked. `scratch_dir` is this run's own copy of
    the tools' workspace (None: the store's). `stop_requested` is how a signal handler stops the run (as `strands
    run` does, cancelling a model call in flight); without it nothing stops the run from outside: it stops at its
    crash point. `off_the_record`: the run follows a crash that made a non-idempotent call's outcome unknown, so a
    cassette's misses are answered by the synthetic model (`faults.kit.cassette.off_the_record`). `lockstep`: concurrent
    units take turns in a fixed order (the golden run and the in-process explorer; the units of the target's
    `unit_order` first); the classes that run real processes keep free threading, so other interleavings are
    exercised there."""

    def factory(*, agent_id: str, provider: str, model_id: Any, runtime: Any) -> Any:
        from strands_durable.models.providers import build_model

        if model_factory is not None:
            model = model_factory(agent_id=agent_id, provider=provider, model_id=model_id, runtime=runtime)
        else:
            synthetic = None
            if target.model is None or off_the_record:
                synthetic = build_model("synthetic", model_id=model_id, runtime=runtime, seed=target.seed)
            if target.model is not None:
                model = target.model(agent_id=agent_id, model_id=model_id, runtime=runtime)
                if off_the_record:
                    from strands_durable.faults.kit.cassette import off_the_record as leave_the_record

                    model = leave_the_record(model, synthetic)
            else:
                model = synthetic
        return counting_model(model, requests) if requests is not None else model

    extra: dict[str, Any] = {}
    if stop_requested is not None:
        extra["stop_requested"] = stop_requested
    return RunOptions(
        provider="synthetic",  # offline semantics (fixed clock, scratch directory); the model comes from the factory
        seed=target.seed,
        cli_vars=[f"{k}={v}" for k, v in target.variables.items()],
        out_dir=out_dir,
        scratch_dir=scratch_dir,
        hitl_use_defaults=True,
        hitl_answer=target.hitl_answer,
        extra_tools=dict(target.tools),
        model_factory=factory,
        network=target.network_tools is not None,  # the cassette answers (or records) every network tool
        network_tools=target.network_tools,
        crash_points=bus,
        created_at=PINNED_CREATED_AT,
        lockstep=lockstep,
        lockstep_priority=target.unit_order,
        cancel_in_flight=stop_requested is not None,
        **extra,
    )


def observe(bus: CrashPoints, phase: Phase) -> None:
    """Record into `phase` every point, each tool that executes and the tool results each commit records."""

    def record(point: CrashPoint) -> None:
        phase.emitted.append(point)
        if isinstance(point, ToolCall) and point.site == "tool.before":
            phase.tools_run.append(point)
        elif isinstance(point, Commit) and point.site == "store.after_commit":
            phase.commits.append(point.tool_results)

    bus.subscribe(record)


def arm(bus: CrashPoints, phase: Phase, target: CrashPoint, skip: int) -> None:
    """Raise `InjectedCrash` at the `skip`-th emission (0-based) of the target's site and path in this run."""
    seen = [0]

    def crash(point: CrashPoint) -> None:
        if phase.fired is None and point.site == target.site and point.path == target.path:
            if seen[0] >= skip:
                phase.fired = point
                raise InjectedCrash(point)
            seen[0] += 1

    bus.subscribe(crash)


def crash_at(point_id: str) -> CrashPoints:
    """A crash-point bus that raises `InjectedCrash` at the first emission of the point `point_id` (a run's
    `crash_points`, where a test crashes a run it drives itself)."""
    bus = CrashPoints()
    fired: list[CrashPoint] = []

    def crash(point: CrashPoint) -> None:
        if not fired and point.id == point_id:
            fired.append(point)
            raise InjectedCrash(point)

    bus.subscribe(crash)
    return bus


def watch_convergence(
    bus: CrashPoints,
    phase: Phase,
    store: WrappingStore,
    golden: WorkflowGoldenRun,
    pending: Iterable[ToolKey] = (),
) -> None:
    """Stop the run (`Converged`) at the first commit whose state equals the golden run's at one of its
    checkpoints; `phase` keeps where, the journal record and the golden state's digest.

    When the golden run's tools changed their workspace, the workspace is judged there too, so both must hold
    exactly the effects of the committed tool calls: the run stops only where no tool call is running or ran
    without its result committed (`pending`: those of the runs before it, whose effects the workspace may hold,
    until this run commits their results), and only at a golden checkpoint where no effect was uncommitted either.
    Once it stops, a tool of another thread that had not started yet never starts (the decision and each start
    hold one lock), so no effect lands after the decision."""
    digester = golden.digester
    effects_judged = golden.workspace.changed
    running: set[ToolKey] = set(pending)  # tool calls that started and whose results are not committed
    lock = threading.Lock()
    stopped: list[CrashPoint] = []

    def check(point: CrashPoint) -> None:
        if effects_judged and isinstance(point, ToolCall) and point.site == "tool.before":
            with lock:
                if stopped:
                    raise Converged(stopped[0])
                running.add(point.key)
            return
        session = store.session
        if point.site != "store.after_commit" or session is None or phase.fired is not None:
            return
        with lock:
            if isinstance(point, Commit):
                running.difference_update(point.tool_results)
            if session.stored_seq() != session.state.seq:
                return  # a record held in memory (S3 batching) is not stored yet: stopping here would lose it
            digest = digester.digest(session.state)
            checkpoint = golden.checkpoint_states.get(digest)
            if checkpoint is None or (effects_judged and (running or checkpoint.effect_uncommitted)):
                return
            stopped.append(point)
            phase.converged_at = point
            phase.converged_seq = session.state.seq
            phase.converged_digest = digest
        raise Converged(point)

    bus.subscribe(check)
