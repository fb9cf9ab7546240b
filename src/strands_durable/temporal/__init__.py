"""Runs on Temporal: each unit of work is an activity, sessions live in a shared store, any worker resumes any run.

The workflow (workflow.py) does not know the seven patterns: it loops on the runner's plan mode
(runner/plan.py), asking an activity for the ready units, then running each as its own activity, until the
runner says the run finished, failed or paused for a human. Activities (activities.py) open the session in the
store every worker shares (`--sessions-dir s3://...`), so a retried activity resumes its unit from the journal.
engine.py is the client side: connect, start, follow, cancel, and the worker. Needs the `temporal` extra.
"""

from __future__ import annotations

DEFAULT_TASK_QUEUE = "strands-durable"
DEFAULT_NAMESPACE = "default"
WORKFLOW_NAME = "strands-durable.run"
STEP_ACTIVITY = "strands-durable.step"
HITL_SIGNAL = "hitl_response"


def location(sessions_dir: str) -> str:
    """One spelling of a sessions location, so a worker and a run agree on it: URLs as given (no trailing
    slash), directories absolute."""
    if "://" in sessions_dir:
        return sessions_dir.rstrip("/")
    from pathlib import Path

    return str(Path(sessions_dir).expanduser().resolve())
