"""Compound faults: a second death while resuming and a death before each file operation of a repair still end
in the golden result; a store that forgets tool results is caught across two deaths."""

from __future__ import annotations

from pathlib import Path

from strands_durable.faults.classes.compound import crash_during_repair, crash_during_resume, explore_compound
from strands_durable.faults.kit.findings import FaultRun
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.target import ChaosTarget
from tests.faults.conftest import describe


def test_deaths_during_resume_and_during_repair_end_in_the_golden_result(
    chain_target: ChaosTarget, chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    run = explore_compound(
        chain_target, tmp_path, first_points=2, resume_points=(2, 12), repair_stride=3, golden=chain_golden
    )
    assert run.outcomes["resumed after two deaths"] == 4
    assert run.outcomes["repaired and resumed after a death during repair"] > 5
    assert not run.findings, describe(run.findings)


def test_compound_catches_a_store_that_forgets_tool_results(
    chain_golden: WorkflowGoldenRun, tmp_path: Path, monkeypatch
) -> None:
    from strands_durable.store import state as state_module

    monkeypatch.setitem(state_module._HANDLERS, "tool_result", lambda state, event: None)
    run = FaultRun("compound", "chain")
    tool_point = next(p for p in chain_golden.point_ids if p.endswith("tool.committed"))
    crash_during_resume(chain_golden, tool_point, 3, tmp_path, run)
    assert "tool-rerun" in {f.rule for f in run.findings}, describe(run.findings)


def test_a_repair_killed_before_its_first_operation_is_redone(chain_golden: WorkflowGoldenRun, tmp_path: Path) -> None:
    run = FaultRun("compound", "chain")
    crash_during_repair(chain_golden, tmp_path, run, stride=1000)
    assert run.explored == 1 and not run.findings, describe(run.findings)
