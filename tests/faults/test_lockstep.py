"""Racing resumers in lockstep at every commit: a first resumer stopped right after commit i (a crash-point
subscriber waiting on a pipe) while a second runs; exactly one proceeds, the other exits 17, nothing runs twice,
the finished session equals the golden one. A store that lets its lease go between commits is caught there."""

from __future__ import annotations

from pathlib import Path

from strands_durable import LocalStore
from strands_durable.faults.classes.concurrent import explore_concurrent
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.target import ChaosTarget
from tests.faults.conftest import describe
from tests.faults.planted_leases import let_the_lease_go_after_two_commits


def test_two_resumers_in_lockstep_at_every_commit_one_proceeds(
    chain_target: ChaosTarget, chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    run = explore_concurrent(chain_target, tmp_path, resumers=2, golden=chain_golden, lockstep=True)
    stepped = [site for site in run.enumerated if site.startswith("commit")]
    assert run.outcomes["lockstep: one proceeded"] >= 5, run.outcomes
    assert run.outcomes["lockstep: broken"] == 0 and not run.findings, describe(run.findings)
    assert sum(run.enumerated[s] for s in stepped) == run.outcomes["lockstep: one proceeded"]
    assert run.coverage()["commit"] == [run.outcomes["lockstep: one proceeded"]] * 2


class _LeaseLetGoAfterSecondCommit(LocalStore):
    """A planted bug: the session holds its lease when opened and through its first two commits, then lets it go
    (it never checks the lease between commits again)."""

    def open(self, *args, **kwargs):
        session = super().open(*args, **kwargs)
        let_the_lease_go_after_two_commits(session)
        return session


def test_lockstep_catches_a_resumer_that_lets_its_lease_go_between_commits(
    chain_target: ChaosTarget, chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    stepped = explore_concurrent(
        chain_target,
        tmp_path / "lockstep",
        golden=chain_golden,
        store_factory=_LeaseLetGoAfterSecondCommit,
        lockstep=True,
    )
    caught = [f for f in stepped.findings if f.variant == "lockstep" and f.rule == "lease"]
    assert caught, describe(stepped.findings)
    assert all(not f.point.endswith("/commit[0]") for f in caught)  # held through its first commits
