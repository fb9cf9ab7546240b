"""Disk errors at operation N and damaged files: clean exit-12 failures, resumes once the fault is gone, damage
detected and repaired; a store that writes in place instead of renaming is caught."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from strands_durable.faults.classes.disk import DAMAGE, FaultyFileOps, damage_one, explore_disk, fail_at_op
from strands_durable.faults.kit.findings import FaultRun
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.target import ChaosTarget


def test_the_faulty_layer_fails_the_nth_operation_half_written_and_every_one_after(tmp_path: Path) -> None:
    ops = FaultyFileOps(2, errno.ENOSPC)
    ops.write_file(tmp_path / "a", b"first", sync=False)
    with pytest.raises(OSError) as raised:
        ops.write_file(tmp_path / "b", b"0123456789", sync=False)
    assert raised.value.errno == errno.ENOSPC and (tmp_path / "b").read_bytes() == b"01234"
    with pytest.raises(OSError):
        ops.rename(tmp_path / "a", tmp_path / "c")  # the disk stays full
    ops.heal()
    ops.rename(tmp_path / "a", tmp_path / "c")
    assert ops.fired == f"write {tmp_path / 'b'}"


def test_disk_errors_at_every_third_operation_fail_cleanly_and_resume(
    chain_target: ChaosTarget, chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    run = explore_disk(chain_target, tmp_path, stride=3, every_errno=False, damage=False, golden=chain_golden)
    assert run.explored > 20
    assert sum(n for outcome, n in run.outcomes.items() if outcome.startswith("clean-failure: 12")) > 10
    assert run.outcomes["resumed"] > 10
    assert not run.findings, "\n".join(map(str, run.findings[:10]))


@pytest.mark.parametrize("kind", DAMAGE)
def test_damaged_files_are_detected_or_recovered(kind: str, chain_golden: WorkflowGoldenRun, tmp_path: Path) -> None:
    run = FaultRun("disk", "chain")
    damage_one(chain_golden, kind, tmp_path, run)
    assert run.explored == 1
    assert not run.findings, "\n".join(map(str, run.findings))
    expected = "clean-failure: 17" if kind not in ("temp-files", "torn-journal-tail") else "resumed"
    assert run.outcomes[expected] == 1


class _InPlace(FaultyFileOps):
    """A broken store: readable files are rewritten in place instead of through a temp file and a rename."""

    def write_atomic(self, path: Path, data: bytes, *, durable: bool = True) -> None:
        self.write_file(path, data, sync=durable)


def test_a_creation_failed_by_the_disk_leaves_nothing_even_for_a_store_that_writes_in_place(
    chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    # a store that writes in place used to be caught here by the half-written journal header a failed creation
    # left behind; a failed creation now removes its unfinished directory (issue 20), so that half-written file
    # is gone with it (tests/faults/test_power.py still catches in-place writes: a power cut tears them)
    run = FaultRun("disk", "chain")
    for fail_at in range(1, 16):
        fail_at_op(chain_golden, fail_at, "ENOSPC", tmp_path, run, _InPlace)
    assert run.outcomes["failed before the session existed"] >= 3, run.outcomes
    assert not run.findings, "\n".join(map(str, run.findings))
