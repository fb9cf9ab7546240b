"""Real children killed by SIGKILL, SIGINT and SIGTERM at crash points and at random moments resume to the
golden result; a store that keeps commits in process memory is caught; forked children never share a lease."""

from __future__ import annotations

from pathlib import Path

from strands_durable.faults.common import FaultTarget, Golden
from strands_durable.faults.forking import ChildExit, run_in_child
from strands_durable.faults.kill import explore_kill
from strands_durable.store.fileops import AppendHandle, FileOps
from strands_durable.store.local import LocalStore
from tests.faults.conftest import describe


def test_kills_at_crash_points_and_at_random_moments_resume_to_the_golden_result(
    chain_target: FaultTarget, chain_golden: Golden, tmp_path: Path
) -> None:
    run = explore_kill(
        chain_target, tmp_path, max_points=16, graceful_every=4, random_moments=3, golden=chain_golden, seed=3
    )
    assert run.explored == 16 + 2 * 4 + 3
    assert run.outcomes["resumed"] >= 16 + 2 * 4
    assert run.unique_states > 8
    assert not run.findings, describe(run.findings)


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
    chain_target: FaultTarget, chain_golden: Golden, tmp_path: Path
) -> None:
    run = explore_kill(
        chain_target,
        tmp_path,
        signals=("SIGKILL",),
        max_points=10,
        golden=chain_golden,
        store_factory=lambda root: LocalStore(root, fileops=_BufferedJournal()),
    )
    assert {f.rule for f in run.findings} & {"tool-rerun", "identical", "resume-failed"}, describe(run.findings)


def test_a_child_leaves_through_os_exit_on_every_path() -> None:
    assert run_in_child(lambda: 7) == ChildExit(7, None)
    assert run_in_child(lambda: None) == ChildExit(0, None)

    def raises() -> None:
        raise ValueError("boom")

    assert run_in_child(raises) == ChildExit(70, None)
