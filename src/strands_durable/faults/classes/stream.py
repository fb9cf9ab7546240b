"""Broken model streams (F6): a stream cut after k events, duplicate or invalid tool ids, an empty text block.

One model call of a run (the c-th, counted across all agents) goes through a synthetic model holding a
`StreamFault`; every other call, and the retry of the faulted one, is answered by the same policy without the
fault. A broken answer must never be committed as a valid turn: the run retries it (runtime.failure_policy) and
ends identical to the golden run, or it fails clearly (a DurableError) with every stored history still valid,
and a resume once the fault is gone completes identical to the golden run.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoints
from strands_durable.errors import DurableError, exit_code_for
from strands_durable.faults.kit import judge
from strands_durable.faults.kit.findings import FaultClass, FaultRun
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.observe import run_options
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.scratch import reset_dir
from strands_durable.faults.kit.stores import store_at
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.models.events import StreamFault

FAULT = "stream"
KINDS: tuple[tuple[str, int], ...] = (
    ("cut", 0),
    ("cut", 2),
    ("cut", 5),
    ("duplicate_tool_ids", 0),
    ("invalid_tool_id", 0),
    ("empty_text", 0),
)


class _CallCounter:
    def __init__(self) -> None:
        self._count = itertools.count()
        self._lock = threading.Lock()

    def next(self) -> int:
        with self._lock:
            return next(self._count)


def faulting_factory(seed: int, fault: StreamFault, call: int) -> Any:
    """A model factory whose models answer call number `call` of the run (0-based, all agents) with `fault`."""
    from strands_durable.models.providers import build_model
    from strands_durable.models.wrapping import WrappedModel

    counter = _CallCounter()

    def factory(*, agent_id: str, provider: str, model_id: Any, runtime: Any) -> Any:
        healthy = build_model("synthetic", model_id=model_id, runtime=runtime, seed=seed)
        faulty = build_model("synthetic", model_id=model_id, runtime=runtime, seed=seed)
        faulty.stream_fault = fault  # type: ignore[attr-defined]

        class _FaultOnCall(WrappedModel):
            def update_config(self, **config: Any) -> None:
                super().update_config(**config)
                faulty.update_config(**config)

            async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
                model = faulty if counter.next() == call else healthy
                async for event in model.stream(*args, **kwargs):
                    yield event

        return _FaultOnCall(healthy)

    return factory


def model_calls(golden: WorkflowGoldenRun) -> tuple[int, list[int]]:
    """How many model calls the golden run made, and the indices of those answered with tool calls."""
    calls = [p.point.path for p in golden.points if p.point.site == "model.before"]
    tool_paths = [p.point.path for p in golden.points if p.point.site == "tool.before"]
    with_tools = [i for i, path in enumerate(calls) if any(t.startswith(path + "/") for t in tool_paths)]
    return len(calls), with_tools


def explore_stream(
    target: ChaosTarget,
    workdir: Path,
    *,
    kinds: tuple[tuple[str, int], ...] = KINDS,
    max_calls: int | None = None,
    golden: WorkflowGoldenRun | None = None,
    run: FaultRun | None = None,
) -> FaultRun:
    """Fault each chosen model call with each stream fault kind; judge each run (and its resume)."""
    run = run or FaultRun(FAULT, target.name)
    golden = (golden or run_golden(target, workdir / "golden")).require_completed()
    total, with_tools = model_calls(golden)
    for kind, after in kinds:
        candidates = with_tools if kind in ("duplicate_tool_ids", "invalid_tool_id") else list(range(total))
        if max_calls is not None and len(candidates) > max_calls:
            candidates = [candidates[int(i * len(candidates) / max_calls)] for i in range(max_calls)]
        for call in candidates:
            stream_fault_at(golden, StreamFault(kind, after_events=after, times=1), call, workdir / "stream", run)
    return run


def stream_fault_at(golden: WorkflowGoldenRun, fault: StreamFault, call: int, workspace: Path, run: FaultRun) -> None:
    from strands_durable.runner.run import resume, run_workflow

    target = golden.target
    reset_dir(workspace)
    sessions, out_dir = workspace / "sessions", workspace / "out"
    scratch = golden.seed_workspace(workspace / "workspace")
    point = f"call[{call}]"
    variant = fault.kind if fault.kind != "cut" else f"cut@{fault.after_events}"
    run.explore_at(point)
    faulting = faulting_factory(target.seed, fault, call)
    options = run_options(target, out_dir, CrashPoints(), scratch_dir=scratch, model_factory=faulting)
    failure: BaseException | None = None
    try:
        run_workflow(target.spec_path, options, store=store_at(sessions), session_id=target.session_id)
    except Exception as exc:  # judged below: a DurableError is a clear failure, anything else is not
        failure = exc
    try:
        state = store_at(sessions).load(target.session_id)
    except DurableError as exc:
        run.add(point, variant, "unrecoverable", f"the session does not load after the fault: {exc}")
        return
    run.judged(point, variant, judge.stored_valid(state, "a broken answer was committed"))
    if failure is not None and not isinstance(failure, DurableError):
        run.add(point, variant, "unclean-failure", f"{type(failure).__name__}: {failure}")
        return
    if failure is not None:
        run.outcomes[f"clean-failure: {exit_code_for(failure)}"] += 1
        try:
            options = run_options(target, out_dir, CrashPoints(), scratch_dir=scratch)
            resume(target.session_id, options, store=store_at(sessions))
        except DurableError as exc:
            run.add(point, variant, "unrecoverable", f"the resume without the fault failed: {exc}")
            return
    else:
        run.outcomes["completed (retried or harmless)"] += 1
    run.judged(point, variant, judge.completed_on_disk(golden, sessions, golden.target.session_id, scratch))


FAULT_CLASS = FaultClass(FAULT, {"gate": {"max_calls": 2}, "full": {}}, explore_stream)
