"""`newest_unfinished`: the session `--auto-resume` continues for a spec file, if there is one."""

from __future__ import annotations

import os
from pathlib import Path

from strands_durable.store.base import SessionStore, SessionSummary


def newest_unfinished(store: SessionStore, spec_path: str | Path) -> SessionSummary | None:
    """The most recently updated session of this spec file (by absolute path) that is not completed and not
    held by a live process: paused, failed, or `running (stale)`."""
    wanted = os.path.abspath(spec_path)
    for summary in store.list():  # newest first
        if summary.spec_path != wanted or summary.status in ("completed", "corrupt"):
            continue
        if summary.status == "running" and not summary.stale:
            continue
        return summary
    return None
