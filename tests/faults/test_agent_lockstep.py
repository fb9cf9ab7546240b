"""Racing resumers in lockstep at every commit, for a Python agent on `DurableSessionManager`: the first resumer
(a child) stopped right after its i-th store commit while a second resumes; exactly one proceeds, the other is
refused (`SessionInUse`, exit 17), and the conversation and workspace equal the golden run's. A manager that lets
its lease go between commits is caught there."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable.faults.agents.engine import run_golden
from strands_durable.faults.agents.examples import LEDGER_PROMPTS, ledger_agent
from strands_durable.faults.agents.lockstep import lockstep_agent
from strands_durable.faults.agents.run import AgentChaos
from strands_durable.faults.kit.findings import FaultRun
from strands_durable.sdk import DurableSessionManager
from tests.faults.conftest import describe
from tests.faults.planted_leases import let_the_lease_go_after_two_commits

CRASH = "default/inv[0]/turn[0]/answer/store.after_commit"  # the first turn answered, its tools not yet run


class LeaseLetGoBetweenCommits(DurableSessionManager):
    """A planted bug: the session's lease is held when opened and through two commits, then let go (never
    checked between commits again)."""

    def _open_or_wait(self, deadline):
        session = super()._open_or_wait(deadline)
        if not isinstance(session, float) and not getattr(session, "planted", False):
            session.planted = True
            let_the_lease_go_after_two_commits(session)
        return session


def explored(tmp_path: Path, manager: object) -> tuple[int, FaultRun]:
    chaos = AgentChaos(lambda ctx: ledger_agent(ctx, manager), LEDGER_PROMPTS)
    golden = run_golden(chaos, tmp_path / "golden")
    run = FaultRun("concurrent", "ledger")
    return lockstep_agent(golden, CRASH, tmp_path / "lockstep", run), run


@pytest.mark.slow
def test_two_agent_resumers_in_lockstep_at_every_commit_one_proceeds(tmp_path: Path) -> None:
    count, run = explored(tmp_path, "durable")
    assert count >= 10 and run.coverage() == {"commit": [count, count]}
    assert not run.findings, describe(run.findings)


@pytest.mark.slow
def test_lockstep_catches_a_manager_that_lets_its_lease_go_between_commits(tmp_path: Path) -> None:
    count, run = explored(tmp_path, LeaseLetGoBetweenCommits)
    caught = [f for f in run.findings if f.rule == "lease"]
    assert count > 2 and caught, describe(run.findings)
    assert not any(f.point.endswith("/commit[0]") for f in caught)  # held at its first commit: refused there
