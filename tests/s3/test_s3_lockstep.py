"""Racing resumers in lockstep at every commit with the session on S3 (the local SeaweedFS server): a first
resumer stopped right after commit i holds the session's fenced lease while a second resumer runs; exactly one
proceeds, the other is refused with `SessionInUse` or `SessionFenced` (exit 17), nothing runs twice and the finished
session equals the golden one. A store that lets its lease go between commits is caught there too."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from strands_durable.faults.classes.concurrent import explore_concurrent
from strands_durable.faults.kit import stores
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from tests.faults.planted_leases import let_the_lease_go_after_two_commits
from tests.plugin.support import RESEARCH

pytestmark = pytest.mark.slow


@pytest.fixture
def on_s3(s3_env: dict[str, str], shared_bucket: str, monkeypatch: pytest.MonkeyPatch) -> str:
    location = f"s3://{shared_bucket}/lockstep-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv(stores.SESSIONS_ENV, location)
    return location


def test_two_resumers_on_s3_in_lockstep_at_every_commit_one_proceeds(on_s3: str, tmp_path: Path) -> None:
    target = ChaosTarget(RESEARCH)
    golden = run_golden(target, tmp_path / "golden")
    assert type(stores.store_at(tmp_path / "probe")).__name__ == "S3Store"
    run = explore_concurrent(target, tmp_path / "work", resumers=2, golden=golden, lockstep=True)
    proceeded = run.outcomes["lockstep: one proceeded"]
    assert proceeded >= 5, run.outcomes
    assert run.outcomes["lockstep: broken"] == 0 and not run.findings, "\n".join(map(str, run.findings[:10]))
    stepped = [site for site in run.enumerated if site.startswith("commit")]
    assert sum(run.enumerated[s] for s in stepped) == proceeded  # every commit of the resume, each reached


def _letting_the_lease_go(sessions: Path):
    """The kit's S3 store for `sessions`, with a planted bug: a session it opens lets its lease go after its
    second commit (tests/faults/planted_leases.py)."""
    store = stores.store_at(sessions)
    opened = store.open

    def open_letting_go(*args, **kwargs):
        session = opened(*args, **kwargs)
        let_the_lease_go_after_two_commits(session)
        return session

    store.open = open_letting_go
    return store


def test_lockstep_on_s3_catches_a_resumer_that_lets_its_lease_go(on_s3: str, tmp_path: Path) -> None:
    target = ChaosTarget(RESEARCH)
    golden = run_golden(target, tmp_path / "golden")
    run = explore_concurrent(
        target, tmp_path / "work", golden=golden, store_factory=_letting_the_lease_go, lockstep=True, rounds=1
    )
    caught = [f for f in run.findings if f.variant == "lockstep" and f.rule == "lease"]
    assert caught, run.outcomes
    assert all(not f.point.endswith("/commit[0]") for f in caught)  # held through its first commits
