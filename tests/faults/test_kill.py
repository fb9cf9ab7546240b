"""Real children killed by SIGKILL, SIGINT and SIGTERM at crash points and at random moments resume to the
golden result; a child started from the golden journal prefix dies at its point in the golden state; a store that
keeps commits in process memory and a resume that forgets a committed message are caught."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_durable import LocalStore
from strands_durable.faults.classes.kill import explore_kill, kill_at_point
from strands_durable.faults.kit.findings import FaultRun
from strands_durable.faults.kit.forking import ChildExit, run_in_child
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.snapshot import snapshot_digest
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.store.fileops import AppendHandle, FileOps
from strands_durable.store.journal import JOURNAL_NAME, read_journal
from strands_durable.store.state import fold
from strands_durable.store.wrapping import WrappingStore
from tests.faults.conftest import describe


def test_kills_at_crash_points_and_at_random_moments_resume_to_the_golden_result(
    chain_target: ChaosTarget, chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    run = explore_kill(
        chain_target, tmp_path, max_points=16, graceful_every=4, random_moments=3, golden=chain_golden, seed=3
    )
    assert run.explored == 16 + 2 * 4 + 3
    assert run.outcomes["resumed"] >= 16 + 2 * 4
    assert run.unique_states > 8
    # the first point comes before any commit: its three children start from scratch
    assert run.outcomes["started-at-prefix"] == 16 + 2 * 4 - 3 and run.outcomes["converged"] >= 16
    assert not run.findings, describe(run.findings)


def test_a_child_started_at_the_golden_prefix_dies_at_its_point_in_the_golden_state(
    chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    run = FaultRun("kill", "chain")
    point_ids = chain_golden.point_ids[:: max(1, len(chain_golden.point_ids) // 24)]
    for point_id in point_ids:
        outcome = kill_at_point(chain_golden, point_id, "SIGKILL", tmp_path / "kill", run)
        point = chain_golden.point(point_id)
        durable_then = fold(read_journal(Path(JOURNAL_NAME), chain_golden.journal[: point.journal_length]).records)
        assert outcome.died_at == point_id
        assert outcome.crash_digest == snapshot_digest(durable_then), f"the child died elsewhere than {point_id}"
        if point.index > 2:  # the first points come before any commit: those children start from scratch
            assert 0 < outcome.start_index < point.index
    assert not run.findings, describe(run.findings)
    assert run.outcomes["converged"] >= len(point_ids) - 2


class _BufferedJournal(FileOps):
    """A broken store: journal appends stay in process memory until the session closes."""

    def open_append(self, path: Path) -> AppendHandle:
        inner = super().open_append(path)
        pending: list[bytes] = []

        class Buffered:
            def append(self, data: bytes) -> None:
                pending.append(data)

            def sync(self) -> None:
                return None

            def close(self) -> None:
                for data in pending:
                    inner.append(data)
                inner.close()

        return Buffered()


def test_kill_catches_a_store_that_keeps_commits_in_memory(
    chain_target: ChaosTarget, chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    run = explore_kill(
        chain_target,
        tmp_path,
        signals=("SIGKILL",),
        max_points=10,
        golden=chain_golden,
        store_factory=lambda root: LocalStore(root, fileops=_BufferedJournal()),
    )
    # the commits a killed child kept in memory are gone, so a tool whose result it had committed runs again
    reruns = [f.detail for f in run.findings if f.rule == "tool-rerun"]
    assert any("ran again after its result was committed" in detail for detail in reruns), describe(run.findings)


def _forgetful_resume(sessions: Path) -> WrappingStore:
    """A broken resume: the session it opens has lost its latest committed message (in memory only)."""

    def forget(session: Any, created: bool) -> None:
        conversations = [conv for conv in session.state.conversations.values() if conv.seqs]
        if conversations:
            latest = max(conversations, key=lambda conv: conv.seqs[-1])
            for column in (latest.messages, latest.units, latest.seqs):
                column.pop()

    return WrappingStore(LocalStore(sessions), on_open=forget)


def test_kill_at_convergence_catches_a_resume_that_forgets_a_committed_message(
    chain_target: ChaosTarget, chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    run = explore_kill(
        chain_target, tmp_path, signals=("SIGKILL",), max_points=10, golden=chain_golden, resume_store=_forgetful_resume
    )
    assert run.outcomes["converged"] > 0
    # converged in memory, yet the journal up to that checkpoint is not the golden run's: only the disk shows it
    assert "durable-state" in {f.rule for f in run.findings}, describe(run.findings)
    assert len({f.point for f in run.findings}) >= 8, describe(run.findings)


def test_a_child_leaves_through_os_exit_on_every_path() -> None:
    assert run_in_child(lambda: 7) == ChildExit(7, None)
    assert run_in_child(lambda: None) == ChildExit(0, None)

    def raises() -> None:
        raise ValueError("boom")

    assert run_in_child(raises) == ChildExit(70, None)
