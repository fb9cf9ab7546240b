"""How sessions look on a terminal: the `sessions list` table and the `sessions show` panel (rich, no strands)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any

from strands_durable.store.base import LeaseHolder, SessionSummary
from strands_durable.store.state import SessionState
from strands_durable.store.views import session_view
from strands_durable.temporal.status import WorkflowStatus, temporal_engine

_PREVIEW_CHARS = 200


def console(*, stderr: bool = False) -> Any:
    """A rich console; off a terminal it is wide enough that full session ids never wrap."""
    import sys

    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(file=stream, highlight=False, width=None if stream.isatty() else 200, soft_wrap=False)


def short_id(session_id: str) -> str:
    """How a message names a session briefly: a generated UUID by its first 8 characters (`a1b2c3d4...`, as the
    user's document shows it), an id the caller chose (`expenses-1`) whole."""
    import uuid

    try:
        generated = len(session_id) == 36 and str(uuid.UUID(session_id)) == session_id
    except ValueError:
        generated = False
    return f"{session_id[:8]}..." if generated else session_id


def local_time(text: str | None) -> str:
    if not text:
        return "-"
    try:
        value = dt.datetime.fromisoformat(text)
    except ValueError:
        return text
    if value.tzinfo is not None:
        value = value.astimezone()
    return value.strftime("%Y-%m-%d %H:%M:%S")


def display_status(status: str, reason: str | None, *, stale: bool = False, lease_until: float | None = None) -> str:
    """`running (stale)`, `paused (interrupted)`, ...; on S3 a held session says until when its lease holds
    (`running (leased until 14:02:31)`): a resume is refused until then, and works after it if the holder died."""
    if stale:
        return "running (stale)"
    if status == "running" and lease_until is not None:
        return f"running (leased until {dt.datetime.fromtimestamp(lease_until).strftime('%H:%M:%S')})"
    if status in ("paused", "corrupt") and reason:
        return f"{status} ({reason})"
    return status


LIST_COLUMNS = ("Session ID", "Workflow", "Pattern", "Status", "Updated")


def sessions_table(summaries: list[SessionSummary], workflows: Mapping[str, WorkflowStatus] | None = None) -> str:
    """The `sessions list` table as aligned plain text (rich is too slow for thousands of rows); with
    `workflows` (`--temporal`), a last column with each Temporal run's own status ("-" for local runs)."""
    header = LIST_COLUMNS + (("Temporal",) if workflows is not None else ())
    rows = [header] + [
        (
            summary.session_id,
            summary.workflow_name,
            summary.pattern,
            display_status(summary.status, summary.reason, stale=summary.stale, lease_until=summary.lease_until),
            local_time(summary.updated_at),
        )
        + ((_workflow_cell(workflows.get(summary.session_id)),) if workflows is not None else ())
        for summary in summaries
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def _workflow_cell(workflow: WorkflowStatus | None) -> str:
    return "-" if workflow is None else workflow.display()


def summary_json(summary: SessionSummary, workflow: WorkflowStatus | None = None) -> dict[str, Any]:
    """One `sessions list --json` entry; `temporal` is the workflow's status (`--temporal`, Temporal runs)."""
    return {
        "session_id": summary.session_id,
        "workflow_name": summary.workflow_name,
        "pattern": summary.pattern,
        "status": summary.status,
        "display_status": display_status(
            summary.status, summary.reason, stale=summary.stale, lease_until=summary.lease_until
        ),
        "stale": summary.stale,
        "lease_until": None if summary.lease_until is None else _iso(summary.lease_until),
        "reason": summary.reason,
        "created_at": summary.created_at,
        "updated_at": summary.updated_at,
        "spec_path": summary.spec_path,
        **({"temporal": workflow.to_json()} if workflow is not None else {}),
    }


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).isoformat()


def show_json(
    state: SessionState, holder: Any, workflow: WorkflowStatus | None = None, units: Sequence[LeaseHolder] = ()
) -> dict[str, Any]:
    """`sessions show --json`; `units`: the live holders of its units' leases (a run spread over workers)."""
    view = session_view(state)
    stale = state.status == "running" and holder is None and not units
    document = {
        "session": {
            **view,
            "display_status": display_status(state.status, state.reason, stale=stale),
            "token_usage_lost": state.lost_usage(),
        },
        "pattern_state": state.pattern_state,
        "lease": None if holder is None else _lease_json(holder),
        "unit_leases": [
            {"unit": unit.unit, "attempt": unit.attempt, "pid": unit.pid, "host": unit.host} for unit in units
        ],
    }
    engine = temporal_engine(state.meta)
    if engine is not None:
        document["temporal"] = {**engine, "workflow": workflow.to_json() if workflow else None}
    return document


def _lease_json(holder: LeaseHolder) -> dict[str, Any]:
    """The session lease's holder in `show --json`: `since` is null where the store does not record it."""
    return {
        "pid": holder.pid,
        "host": holder.host,
        "owner": holder.owner,
        "since": _iso(holder.started_at) if holder.started_at else None,
    }


def session_panel(
    state: SessionState, holder: Any, workflow: WorkflowStatus | None = None, units: Sequence[LeaseHolder] = ()
) -> Any:
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    view = session_view(state)
    stale = state.status == "running" and holder is None and not units
    usage = view["token_usage"]
    variables = view["variables"] or {}
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    rows = [
        ("Session ID", view["session_id"]),
        ("Workflow", str(view["workflow_name"])),
        ("Pattern", str(view["pattern"])),
        ("Status", display_status(state.status, state.reason, stale=stale)),
        ("Created", local_time(view["created_at"])),
        ("Updated", local_time(view["updated_at"])),
        ("Spec", f"{view['spec_path']} (sha256 {str(view['spec_hash'])[:8]}...)"),
        ("Variables", ", ".join(f"{k}={v}" for k, v in variables.items()) or "-"),
        ("Token usage", _tokens(usage)),
    ]
    if not view["spec_path"]:  # a plain-Python agent session has no spec, nor variables
        rows = [row for row in rows if row[0] not in ("Spec", "Variables")]
    lost = state.lost_usage()
    if lost["total"]:
        rows.append(("Tokens lost", f"{_tokens(lost)} (model answers never committed: a crash or a retry)"))
    engine = temporal_engine(state.meta)
    if engine is not None:
        namespace = engine.get("namespace") or "default"
        rows.append(("Engine", f"Temporal at {engine['address']} (namespace {namespace}, task queue "
                               f"{engine.get('task_queue')})"))  # fmt: skip
        if workflow is not None:
            rows.append(("Workflow status", workflow.display()))
    if state.status == "failed" and state.reason:
        rows.append(("Failure", state.reason))
    if holder is not None:
        since = f" since {local_time(_iso(holder.started_at))}" if holder.started_at else ""
        rows.append(("In use by", holder.describe() + since))
    if units:
        lines = [f"{unit.unit} (attempt {unit.attempt}): pid {unit.pid} on host {unit.host}" for unit in units]
        rows.append(("Units in use by", "\n".join(lines)))
    if view["artifacts_written"]:
        rows.append(("Artifacts", "\n".join(view["artifacts_written"])))
    rows.append(("Pattern state", json.dumps(_previewed(state.pattern_state), indent=2, ensure_ascii=False)))
    for name, value in rows:
        grid.add_row(name, Text(value))
    return Panel(grid, title=f"Session {short_id(view['session_id'])}", title_align="left", expand=False)


def _tokens(usage: dict[str, int]) -> str:
    return f"Total: {usage['total']}  Input: {usage['input']}  Output: {usage['output']}"


def _previewed(value: Any) -> Any:
    """Pattern state with long texts shortened for the panel (`show --json` and `export` keep them whole)."""
    if isinstance(value, dict):
        return {k: _previewed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_previewed(v) for v in value]
    if isinstance(value, str) and len(value) > _PREVIEW_CHARS:
        return value[:_PREVIEW_CHARS] + f"... ({len(value)} chars)"
    return value
