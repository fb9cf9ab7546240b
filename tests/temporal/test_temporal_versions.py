"""Workflow code changes stay compatible with runs already started: recorded histories replay on today's code.

A run started by one release finishes on the next only if the new workflow code makes the same decisions for the
history so far. Temporal's Replayer checks exactly that, without a server. tests/temporal/histories holds runs
recorded by tests/temporal/record_histories.py; a change that breaks them must go behind `workflow.patched(...)`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

HISTORIES = sorted((Path(__file__).resolve().parent / "histories").glob("*.json"))


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
def test_a_recorded_run_replays_on_todays_workflow_code(path):
    from temporalio.client import WorkflowHistory
    from temporalio.worker import Replayer

    from strands_durable.temporal.workflow import DurableRun

    history = WorkflowHistory.from_json(path.stem, path.read_text())
    result = asyncio.run(Replayer(workflows=[DurableRun]).replay_workflow(history, raise_on_replay_failure=False))
    assert result.replay_failure is None, f"{path.name}: {result.replay_failure}"


def test_the_recorded_runs_cover_units_ready_together_and_a_human_answer():
    assert {p.stem for p in HISTORIES} >= {"chain", "parallel-hitl", "workflow"}
