"""`DurableStorage`: a Strands `Storage` for `SnapshotSessionManager` whose writes are durable and conditional.

Each write is a temp file, fsync, rename and directory fsync (the SDK's `LocalFileStorage` does not fsync). A key
this storage has read or written is overwritten only while it still holds what this storage last saw: another
writer's newer value is never silently replaced (`StorageConflict` names the key); a key it has never seen may
be created but not overwritten. The compare and the replace happen under a per-directory file lock, so two
processes cannot both pass the check. The lighter option beside `DurableSessionManager`: whole snapshots, no
journal, no replay of tool results.
"""

from __future__ import annotations

import builtins
import fcntl
import hashlib
import os
import threading
from pathlib import Path

from strands.storage.storage import _normalize_key, _normalize_prefix
from strands.types.exceptions import StorageError

from strands_durable.store.fileops import FileOps, is_temp_file

_LOCK_NAME = ".strands-durable.lock"


class StorageConflict(StorageError):
    """Another writer changed the key since this storage read or wrote it."""

    def __init__(self, key: str) -> None:
        super().__init__(
            f"Storage key {key!r} was changed by another writer since this process read it; refusing to overwrite "
            "the newer value (reload the session)"
        )
        self.key = key


class DurableStorage:
    """Fsync'd, compare-and-swap writes under `base_dir` (keys map to files as in `LocalFileStorage`)."""

    def __init__(self, base_dir: str | Path, *, fileops: FileOps | None = None) -> None:
        self.base_dir = Path(base_dir).expanduser()
        self._ops = fileops or FileOps()
        self._seen: dict[str, str | None] = {}  # key -> digest of the bytes last read or written (None: absent)
        self._lock = threading.Lock()

    def _path(self, key: str) -> Path:
        return self.base_dir / _normalize_key(key)

    async def write(self, key: str, data: bytes) -> None:
        normalized = _normalize_key(key)
        path = self.base_dir / normalized
        try:
            self._ops.makedirs(path.parent)
            with self._lock, _DirectoryLock(self.base_dir, self._ops):
                current = _digest_of(path)
                if current is not None and (normalized not in self._seen or self._seen[normalized] != current):
                    raise StorageConflict(normalized)
                self._ops.write_atomic(path, bytes(data))
                self._seen[normalized] = hashlib.sha256(data).hexdigest()
        except OSError as exc:
            raise StorageError(f"cannot write {path}: {os.strerror(exc.errno) if exc.errno else exc}") from exc

    async def read(self, key: str) -> bytes | None:
        normalized = _normalize_key(key)
        path = self.base_dir / normalized
        try:
            data = self._ops.read_bytes(path)
        except FileNotFoundError:
            self._seen[normalized] = None
            return None
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc}") from exc
        self._seen[normalized] = hashlib.sha256(data).hexdigest()
        return data

    async def delete(self, key: str) -> None:
        normalized = _normalize_key(key)
        path = self.base_dir / normalized
        try:
            with self._lock, _DirectoryLock(self.base_dir, self._ops):
                current = _digest_of(path)
                if current is None:
                    return
                if self._seen.get(normalized) != current:
                    raise StorageConflict(normalized)
                self._ops.remove(path)
                self._ops.fsync_dir(path.parent)
                self._seen[normalized] = None
        except OSError as exc:
            raise StorageError(f"cannot delete {path}: {exc}") from exc

    async def list(self, query: str = "") -> builtins.list[str]:
        prefix = _normalize_prefix(query)
        if not self.base_dir.exists():
            return []
        keys = []
        for root, _dirs, files in os.walk(self.base_dir):
            for name in files:
                if name == _LOCK_NAME or is_temp_file(name):
                    continue
                key = (Path(root) / name).relative_to(self.base_dir).as_posix()
                if key.startswith(prefix):
                    keys.append(key)
        return sorted(keys)


def _digest_of(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


class _DirectoryLock:
    """An exclusive flock on `<base_dir>/.strands-durable.lock` (held across compare and replace)."""

    def __init__(self, base_dir: Path, ops: FileOps) -> None:
        self.path = base_dir / _LOCK_NAME
        self.ops = ops
        self.fd = -1

    def __enter__(self) -> _DirectoryLock:
        if not self.path.exists():
            self.ops.makedirs(self.path.parent)
            self.ops.write_atomic(self.path, b"")
        self.fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
