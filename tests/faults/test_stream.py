"""Broken model streams are never committed as a turn: the run retries them and ends identical to the golden
run. Without the runner's check of whole answers, the harness finds the invalid turns."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable.faults.classes.stream import explore_stream
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.target import ChaosTarget
from tests.faults.conftest import describe

BROKEN = (("cut", 2), ("duplicate_tool_ids", 0), ("invalid_tool_id", 0), ("empty_text", 0))


def test_broken_streams_are_retried_and_never_committed(
    chain_target: ChaosTarget, chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    run = explore_stream(chain_target, tmp_path, kinds=BROKEN, max_calls=1, golden=chain_golden)
    assert run.explored == len(BROKEN)
    assert not run.findings, describe(run.findings)


@pytest.mark.parametrize("kind", ["duplicate_tool_ids", "invalid_tool_id"])
def test_the_harness_finds_broken_turns_when_answers_are_not_checked(
    kind: str, chain_target: ChaosTarget, chain_golden: WorkflowGoldenRun, tmp_path: Path, monkeypatch
) -> None:
    from strands_durable.runner import retry

    monkeypatch.setattr(retry, "malformed_answer", lambda events: None)  # the mutation: no check of answers
    run = explore_stream(chain_target, tmp_path, kinds=((kind, 0),), max_calls=1, golden=chain_golden)
    assert "invalid-history" in {f.rule for f in run.findings}, describe(run.findings)
