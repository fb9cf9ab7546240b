"""The choices of one run (`RunOptions`): what a caller of `run_workflow` / `resume` decides, frozen."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoints
from strands_durable.runner.reporter import Reporter


@dataclass(frozen=True)
class RunOptions:
    """Choices of one `strands run` (recorded in the session so a resume repeats them)."""

    provider: str | None = None  # overrides runtime.provider and every agent's provider
    seed: int = 0
    cli_vars: list[str] = field(default_factory=list)
    out_dir: str | Path = Path("artifacts")  # a directory, or `s3://BUCKET/PREFIX` kept as text
    force: bool = False
    hitl_response: str | None = None  # answers the pending HITL pause (the first one this run reaches)
    hitl_answer: str | None = None  # answers every HITL pause of the run (chaos runs, the plugin's ini answer)
    hitl_use_defaults: bool = False  # answer every HITL step with its `default` (chaos runs, CI)
    scripts: Any = None  # for provider "scripted": agent id -> script
    extra_tools: dict[str, Any] = field(default_factory=dict)  # name -> Strands tool (Python API)
    model_factory: Callable[..., Any] | None = None  # (agent_id, provider, model_id, runtime) -> Model
    crash_points: CrashPoints | None = None
    reporter: Reporter = field(default_factory=Reporter)
    stop_requested: Callable[[], bool] = lambda: False
    validate_requests: bool = True
    created_at: dt.datetime | None = None  # pins a new session's creation time (chaos runs repeat one run exactly)
    cancel_in_flight: bool = True  # a stop request also cancels a model call in flight (off: next safe point)
    defer_commits: bool = True  # answers and results fsynced in the background, awaited before the next call
    lockstep: bool = False  # concurrent units take turns in a fixed order (chaos runs; see runner/concurrency.py)
    lockstep_priority: tuple[str, ...] = ()  # under lockstep, these units' jobs go first, in this order (chaos)
    scratch_dir: Path | None = None  # where offline file-writing tools write (None: the store's workspace)
    allow_python_exec: bool = False  # --allow-python-exec: the `python_exec` tool may run
    network: bool = False  # --network: tools may use the network even with an offline provider
    network_tools: Any = None  # how tools reach the network (chaos: a cassette); None: directly (runner/tools.py)
    trace_exporter: Any = None  # an OpenTelemetry SpanExporter for telemetry.otel's spans instead of its own (tests)
    unit_gate: Any = None  # a runner.plan.UnitGate: plan mode, only the units it allows run (None: all of them)
