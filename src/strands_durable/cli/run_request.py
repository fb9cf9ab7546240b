"""The flags of one `strands run`, checked, and the `RunOptions` they choose: one place for a local run
(`cli/run.py`) and a run on Temporal (`cli/temporal.py`) alike."""

from __future__ import annotations

import datetime as dt
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.errors import UsageError

CLOCK_ENV = "STRANDS_CLOCK"


@dataclass
class RunRequest:
    """The flags of one `strands run`, checked."""

    spec: Path | None
    resume_id: str | None
    hitl_response: str | None
    cli_vars: list[str]
    provider: str | None
    seed: int | None
    sessions_dir: str | None
    out: str | None
    force: bool
    save_session: bool
    auto_resume: bool
    json_output: bool
    allow_python_exec: bool = False
    network: bool = False
    clock: str | None = None
    ignored_with_resume: list[str] = field(default_factory=list)


def pinned_clock(value: str | None) -> dt.datetime | None:
    """The instant `--clock` / STRANDS_CLOCK names (ISO 8601; no zone means UTC), or None when not given."""
    if value is None or not value.strip():
        return None
    try:
        instant = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"--clock ({CLOCK_ENV}) must be an ISO 8601 time such as 2026-01-01T00:00:00Z, got {value!r}"
        ) from None
    return instant if instant.tzinfo else instant.replace(tzinfo=dt.timezone.utc)


def program_name() -> str:
    name = os.path.basename(sys.argv[0]) if sys.argv else ""
    return name if name in ("strands", "strands-durable") else "strands"


def run_options(request: RunRequest, **extra: Any) -> Any:
    """The RunOptions the flags of a new run choose (plus `extra`), for a local run and a run on Temporal alike."""
    from strands_durable.runner.options import RunOptions

    return RunOptions(
        provider=request.provider,
        seed=request.seed or 0,
        cli_vars=request.cli_vars,
        out_dir=request.out or Path("artifacts"),
        force=request.force,
        allow_python_exec=request.allow_python_exec,
        network=request.network,
        created_at=pinned_clock(request.clock),
        **extra,
    )
