"""Racing resumers: exactly one proceeds, the others exit 17; a killed holder is taken over; nothing committed
runs twice (fsynced ledger). A store that releases its lease early is caught."""

from __future__ import annotations

from pathlib import Path

from strands_durable import LocalStore
from strands_durable.faults.classes.concurrent import explore_concurrent
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.target import ChaosTarget
from tests.faults.conftest import describe


def test_racing_resumers_and_a_takeover_after_the_holder_dies(
    chain_target: ChaosTarget, chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    run = explore_concurrent(chain_target, tmp_path, resumers=3, golden=chain_golden)
    assert run.explored == 2
    assert run.outcomes["race: 1 proceeded, 2 refused"] == 1
    assert run.outcomes["takeover: completed after the holder's death"] == 1
    assert not run.findings, describe(run.findings)


class _EarlyRelease(LocalStore):
    """A broken store: the lease is let go as soon as the session is open."""

    def open(self, *args, **kwargs):
        session = super().open(*args, **kwargs)
        session._lease.release()
        return session


def test_concurrency_catches_a_store_that_releases_the_lease_early(
    chain_target: ChaosTarget, chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    run = explore_concurrent(chain_target, tmp_path, golden=chain_golden, store_factory=_EarlyRelease)
    assert "lease" in {f.rule for f in run.findings}, describe(run.findings)
