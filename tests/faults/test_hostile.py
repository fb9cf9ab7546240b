"""The hostile-file class (faults/classes/hostile.py) over a real workflow: every case of
strands_durable.testing.hostile_files does what it says beside a healthy session, and a store that hides a
damaged session from `sessions list` (what every store did before issue 39) is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable import LocalStore
from strands_durable.faults.classes.hostile import explore_hostile
from strands_durable.faults.classes.registry import fault_class
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.store import SessionSummary
from strands_durable.testing.hostile_files import CASES
from tests.faults.conftest import describe, rules

pytestmark = pytest.mark.slow


def test_every_hostile_file_does_what_its_case_says(
    chain_target: ChaosTarget, chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    run = explore_hostile(chain_target, tmp_path, golden=chain_golden)
    assert not run.findings, describe(run.findings)
    assert run.explored == len(CASES)
    assert run.outcomes["clean-failure: 17"] == len(CASES)
    assert run.outcomes["resumed"] == sum(1 for c in CASES if c.outcome == "repairable")
    assert fault_class("hostile").explore is explore_hostile


class _HidesDamage(LocalStore):
    """A broken store: a session it cannot read is left out of the listing (the behaviour before issue 39)."""

    def list(self) -> list[SessionSummary]:
        return [summary for summary in super().list() if summary.status != "corrupt"]


def test_a_store_that_hides_a_damaged_session_is_caught(
    chain_target: ChaosTarget, chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    run = explore_hostile(
        chain_target, tmp_path, cases=("journal-deleted",), golden=chain_golden, store_factory=_HidesDamage
    )
    assert rules(run.findings) == {"listed-wrong"}, describe(run.findings)
