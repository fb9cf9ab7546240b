"""`SlowSyncOps`: the real file operations on a disk whose appended files' fdatasync takes 20 ms more, so a
deferred commit is certainly still in flight when the run goes on and a missing barrier cannot hide behind a fast
disk (tests of deferred commits: tests/core/test_durable_before_effects.py, tests/faults/test_power.py)."""

from __future__ import annotations

import time
from pathlib import Path

from strands_durable.store.fileops import AppendHandle, FileOps

SYNC_DELAY_S = 0.02


class SlowSyncOps(FileOps):
    def open_append(self, path: Path) -> AppendHandle:
        inner = super().open_append(path)

        class Handle:
            def append(self, data: bytes) -> None:
                inner.append(data)

            def sync(self) -> None:
                time.sleep(SYNC_DELAY_S)
                inner.sync()

            def close(self) -> None:
                inner.close()

        return Handle()
