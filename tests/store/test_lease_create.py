"""The lease's lock file is created in place and without fsync: two processes that both found it missing open the
same file (one of them gets SessionInUse), and a lock file lost to a power cut is made again by the next run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from strands_durable.errors import SessionInUse
from strands_durable.faults.classes.recording import RecordingFileOps
from strands_durable.store.fileops import FileOps
from strands_durable.store.layout import LEASE_LOCK
from strands_durable.store.lease import Lease


def test_two_runs_that_both_found_the_lock_file_missing_cannot_both_hold_the_lease(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = Lease(tmp_path, "s1", FileOps()).acquire()
    try:
        lock = tmp_path / LEASE_LOCK
        real_open = os.open
        missed: list[Path] = []

        def open_missing_once(path: Any, *args: Any, **kwargs: Any) -> int:
            # the second run tried to open the file before the first created it (the race a create-on-miss
            # leaves open): it creates the file itself, and must still lock the first run's inode
            if Path(path) == lock and not missed:
                missed.append(lock)
                raise FileNotFoundError(path)
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(os, "open", open_missing_once)
        with pytest.raises(SessionInUse):
            Lease(tmp_path, "s1", FileOps()).acquire()
        assert missed == [lock]
    finally:
        first.release()


def test_the_lock_file_is_neither_renamed_into_place_nor_fsynced_and_a_lost_one_is_made_again(tmp_path: Path) -> None:
    ops = RecordingFileOps()
    Lease(tmp_path, "s1", ops).acquire().release()
    lock = tmp_path / LEASE_LOCK
    assert [op.kind for op in ops.log if op.path == lock or op.dst == lock] == ["create", "write"]
    lock.unlink()  # as a power cut may leave it: nobody holds the lock after one
    again = Lease(tmp_path, "s1", ops).acquire()
    try:
        assert lock.exists() and again.held
    finally:
        again.release()
