"""`RecordingFileOps`: the real file operations, each one logged in order with its bytes.

The power-loss simulation (`faults/classes/power.py`) replays the log to rebuild what a disk may hold after a power cut.
Every primitive is logged after it succeeded; compositions (`write_atomic`, `makedirs`, `remove_tree`) are built
from the primitives, so their steps are logged one by one. The harness adds `mark` entries (for example "this
commit returned to its caller") so a crash state knows what had been promised durable at that moment.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_durable.store.fileops import AppendHandle, FileOps

# kinds: create (a new file appeared), write (whole content), fsync, append, fdatasync, rename, fsync_dir, mkdir,
# remove, rmdir, truncate (fsynced), sync_all, mark
BARRIERS = frozenset({"fsync", "fdatasync", "fsync_dir", "truncate", "sync_all"})


@dataclass(frozen=True)
class Op:
    kind: str
    path: Path | None = None
    dst: Path | None = None
    data: bytes = b""
    size: int = 0
    info: Any = None  # a mark's payload; an fdatasync's: the log length when it started (what it covers)


class RecordingFileOps(FileOps):
    """Real, durable file operations that also keep `log`, the ordered list of what was done (thread-safe)."""

    def __init__(self) -> None:
        self.log: list[Op] = []
        self._lock = threading.Lock()
        self._ops = FileOps()  # the real operations; this layer records each one after it succeeded

    def _add(self, op: Op) -> None:
        with self._lock:
            self.log.append(op)

    def mark(self, info: Any) -> None:
        self._add(Op("mark", info=info))

    def write_file(self, path: Path, data: bytes, *, sync: bool) -> None:
        existed = path.exists()
        self._ops.write_file(path, data, sync=sync)
        with self._lock:
            if not existed:
                self.log.append(Op("create", path))
            self.log.append(Op("write", path, data=bytes(data)))
            if sync:
                self.log.append(Op("fsync", path))

    def rename(self, src: Path, dst: Path) -> None:
        self._ops.rename(src, dst)
        self._add(Op("rename", src, dst))

    def fsync_dir(self, path: Path) -> None:
        self._ops.fsync_dir(path)
        self._add(Op("fsync_dir", path))

    def remove(self, path: Path) -> None:
        self._ops.remove(path)
        self._add(Op("remove", path))

    def rmdir(self, path: Path) -> None:
        self._ops.rmdir(path)
        self._add(Op("rmdir", path))

    def mkdir(self, path: Path) -> None:
        self._ops.mkdir(path)
        self._add(Op("mkdir", path))

    def truncate(self, path: Path, size: int) -> None:
        self._ops.truncate(path, size)
        self._add(Op("truncate", path, size=size))

    def open_append(self, path: Path) -> AppendHandle:
        existed = path.exists()
        handle = self._ops.open_append(path)
        if not existed:
            self._add(Op("create", path))
        return _RecordingAppender(self, path, handle)

    def sync_all(self) -> None:
        self._ops.sync_all()
        self._add(Op("sync_all"))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for op in self.log:
            out[op.kind] = out.get(op.kind, 0) + 1
        return out


class _RecordingAppender:
    def __init__(self, owner: RecordingFileOps, path: Path, inner: AppendHandle) -> None:
        self._owner = owner
        self._path = path
        self._inner = inner

    def append(self, data: bytes) -> None:
        self._inner.append(data)
        self._owner._add(Op("append", self._path, data=bytes(data)))

    def sync(self) -> None:
        # an fdatasync covers what was appended before it started: another thread may append while it runs
        with self._owner._lock:
            covers = len(self._owner.log)
        self._inner.sync()
        self._owner._add(Op("fdatasync", self._path, info=covers))

    def close(self) -> None:
        self._inner.close()
