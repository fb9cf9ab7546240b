"""What the workflow and its activities pass each other: ids and short statuses, never messages or secrets.

Plain dataclasses, safe inside Temporal's workflow sandbox (no I/O, no heavy imports).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The activity limits of a run that does not say otherwise (engine.activity_limits, workflow.py)
DEFAULT_UNIT_TIMEOUT_S = 2 * 3600.0  # one unit: model turns and tools, many of them
DEFAULT_PLAN_TIMEOUT_S = 300.0  # a plan pass replays committed units and runs none
DEFAULT_MAX_ATTEMPTS = 50  # attempts that died or found the session busy; a run's own failure is a result


@dataclass
class RunInput:
    """A run as the workflow sees it: the session (its id is the workflow id) and where sessions live."""

    session_id: str
    sessions_dir: str
    hitl_use_defaults: bool = False
    heartbeat_timeout_s: float = 20.0  # a unit attempt silent this long is retried (on another worker)
    # activity limits (engine.activity_limits); None in runs started before they existed: the workflow's defaults
    unit_timeout_s: float | None = None
    plan_timeout_s: float | None = None
    max_attempts: int | None = None


@dataclass
class StepInput:
    """One activity: a plan pass (`unit` None) or one unit, with the human's answer when one is due."""

    session_id: str
    sessions_dir: str
    unit: str | None = None
    hitl_response: str | None = None
    hitl_use_defaults: bool = False
    stop: bool = False  # the run was cancelled: record that it stopped (paused, interrupted) if it was running


@dataclass
class StepResult:
    """`ready` with the units to run next, or the run's end: `completed`, `paused`, `failed`, `cancelled`."""

    status: str
    ready: list[str] = field(default_factory=list)
    reason: str = ""
    exit_code: int = 0
