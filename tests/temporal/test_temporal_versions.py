"""Workflow code changes stay compatible with runs already started: recorded histories replay on today's code.

A run started by one release finishes on the next only if the new workflow code makes the same decisions for the
history so far. Temporal's Replayer checks exactly that, without a server. tests/temporal/histories holds runs
recorded by tests/temporal/record_histories.py (`<run>.json`: release 1, `<run>.r2.json`: release 2, which keeps
its progress in the memo behind `workflow.patched("progress-memo")`); a change that breaks them must go behind
`workflow.patched(...)`. The live upgrade of a running run is in test_temporal_upgrade.py.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.temporal.support import patches_and_memos

HISTORIES = sorted((Path(__file__).resolve().parent / "histories").glob("*.json"))
RELEASE_1 = [p for p in HISTORIES if "." not in p.stem]


def replay(path: Path, workflow: type) -> BaseException | None:
    from temporalio.client import WorkflowHistory
    from temporalio.worker import Replayer

    history = WorkflowHistory.from_json(path.stem, path.read_text())
    result = asyncio.run(Replayer(workflows=[workflow]).replay_workflow(history, raise_on_replay_failure=False))
    return result.replay_failure


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
def test_a_recorded_run_replays_on_todays_workflow_code(path):
    from strands_durable.temporal.workflow import DurableRun

    failure = replay(path, DurableRun)
    assert failure is None, f"{path.name}: {failure}"


@pytest.mark.parametrize("path", RELEASE_1, ids=[p.stem for p in RELEASE_1])
def test_the_frozen_release_1_workflow_is_the_code_that_recorded_its_histories(path):
    from tests.temporal.workflow_v1 import DurableRun

    failure = replay(path, DurableRun)
    assert failure is None, f"{path.name}: {failure}"


def test_the_recorded_runs_cover_units_ready_together_and_a_human_answer_in_every_release():
    assert {p.stem for p in HISTORIES} >= {"chain", "parallel-hitl", "workflow"}
    assert {p.stem for p in HISTORIES} >= {"chain.r2", "parallel-hitl.r2", "workflow.r2"}


def test_only_release_2_histories_carry_the_progress_patch_and_its_memo():
    for path in HISTORIES:
        markers, memos = patches_and_memos(json.loads(path.read_text()))
        if path in RELEASE_1:
            assert (markers, memos) == ([], 0), path.name
        else:
            assert markers == ["progress-memo"] and memos >= 2, (path.name, markers, memos)
