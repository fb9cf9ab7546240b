"""`cleanup_sessions`: delete sessions not updated for a while; never one a live process holds.

Retention: when `STRANDS_SESSIONS_RETENTION` (e.g. `7d`) is set, `strands run` applies the same cleanup after each
run. It is off by default.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from strands_durable.errors import (
    CorruptSession,
    DurableError,
    SessionInUse,
    SessionNotFound,
    SessionUnreadable,
    UsageError,
)
from strands_durable.store.base import SessionStore, SessionSummary

RETENTION_ENV = "STRANDS_SESSIONS_RETENTION"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)


@dataclass
class CleanupReport:
    deleted: list[SessionSummary] = field(default_factory=list)  # or, in a dry run, would be deleted
    skipped: list[tuple[SessionSummary, str]] = field(default_factory=list)  # old enough, but kept: why
    failed: list[tuple[SessionSummary, DurableError]] = field(default_factory=list)  # its delete failed (I/O): why
    finished: list[str] = field(default_factory=list)  # ids of deletes cut short before, finished now (any age)
    unfinished: list[tuple[str, DurableError]] = field(default_factory=list)  # such deletes that failed again: why


def parse_age(text: str, *, what: str = "--older-than") -> dt.timedelta:
    """`30s`, `15m`, `12h`, `7d`, `2w` as a timedelta (UsageError naming `what` otherwise)."""
    match = _AGE.match(text)
    if not match:
        raise UsageError(f"{what}: not a duration: {text!r} (use a number and a unit: 30m, 12h, 7d, 2w)")
    return dt.timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2).lower()])


def retention_from_env() -> dt.timedelta | None:
    raw = os.environ.get(RETENTION_ENV, "").strip()
    if not raw or raw.lower() in {"0", "off", "never"}:
        return None
    return parse_age(raw, what=RETENTION_ENV)


def cleanup_sessions(
    store: SessionStore,
    older_than: dt.timedelta,
    statuses: Collection[str] | None = None,
    *,
    dry_run: bool = False,
    keep: Collection[str] = (),
    now: dt.datetime | None = None,
    finish_deletes: bool = True,
) -> CleanupReport:
    """Delete sessions last updated more than `older_than` ago whose status is in `statuses` (when None: every
    status but `idle`; an agent's chat between invocations is deleted only when `idle` is asked for by name).

    A session a live process holds is skipped (checked, and the delete itself takes the lease), whatever its
    status, and so is every id in `keep` and every session that cannot be read (reported as skipped, never
    deleted unasked); a delete that fails (permission denied, a disk error) is reported in `failed`, apart from
    the sessions kept on purpose, and the others are still deleted. `dry_run` only reports. A delete that was cut
    short is finished first, whatever its age (`finished`; one that fails again is in `unfinished`, and the
    cleanup goes on), unless `finish_deletes` is False (a caller that finished them itself).
    """
    now = now or dt.datetime.now(dt.timezone.utc)
    report = CleanupReport()
    if finish_deletes and not dry_run:
        report.finished = store.finish_interrupted_deletes(report.unfinished)
    for summary in store.list():
        if summary.status == "corrupt":  # never deleted unasked: what is left of it may be worth saving
            if statuses is None or "corrupt" in statuses:
                report.skipped.append((summary, f"{summary.display_status}; `strands sessions delete` removes it"))
            continue
        updated = _parse_time(summary.updated_at or summary.created_at)
        if updated is None or now - updated < older_than:
            continue
        wanted = summary.status in statuses if statuses is not None else summary.status != "idle"
        if not wanted or summary.session_id in keep:
            continue
        try:
            holder = store.holder(summary.session_id)
        except SessionNotFound:
            continue  # deleted by someone else meanwhile
        if holder is not None or (summary.status == "running" and not summary.stale):
            where = f" by {holder.describe()}" if holder is not None else ""
            report.skipped.append((summary, f"in use{where}"))
            continue
        damage = _damage(store, summary.session_id)
        if damage is not None:
            report.skipped.append((summary, f"corrupt ({damage}); `strands sessions delete` removes it"))
            continue
        if dry_run:
            report.deleted.append(summary)
            continue
        try:
            store.delete(summary.session_id)
        except SessionInUse as exc:
            report.skipped.append((summary, f"in use by pid {exc.pid} on host {exc.host}"))
        except SessionNotFound:
            continue  # deleted by someone else meanwhile
        except DurableError as exc:
            report.failed.append((summary, exc))
        else:
            report.deleted.append(summary)
    return report


def _damage(store: SessionStore, session_id: str) -> str | None:
    """What is wrong with a session about to be deleted, read whole (None: nothing). The listing reads a journal's
    first and last records only, so a record damaged in between shows there as the status before it; a delete is
    the one step that cannot be taken back, so it reads every record first."""
    try:
        store.load(session_id)
    except (CorruptSession, SessionUnreadable) as exc:
        return f"{Path(exc.path).name}: {exc.detail}"
    except SessionNotFound:
        return None  # deleted by someone else meanwhile: the delete says so
    return None


def apply_retention(store: SessionStore, *, keep: Collection[str] = ()) -> CleanupReport | None:
    """The automatic cleanup after a run, when `STRANDS_SESSIONS_RETENTION` is set (None when it is not);
    `keep` holds the session just run."""
    retention = retention_from_env()
    if retention is None:
        return None
    return cleanup_sessions(store, retention, keep=keep)


def _parse_time(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        value = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
