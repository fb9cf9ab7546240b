"""The exclusive per-session lease of the local store: an OS lock (flock) held for the life of a run, plus who
holds it.

The kernel drops the lock when its holder dies, so a dead holder's lease is taken over without guessing. A lease
whose session was dropped without `close` or `abandon` (garbage collected) is released then, as its process's death
would release it, with a `ResourceWarning` naming the session: until then the process keeps it from everyone.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
import warnings
import weakref
from pathlib import Path

from strands_durable.errors import SessionInUse
from strands_durable.store import bounded_json
from strands_durable.store.base import LeaseHolder
from strands_durable.store.fileops import FileOps
from strands_durable.store.io_errors import io_error
from strands_durable.store.layout import LEASE_JSON, LEASE_LOCK

_UNKNOWN = LeaseHolder(0, "unknown", 0.0)


def _read_holder(directory: Path) -> LeaseHolder | None:
    try:
        data = bounded_json.loads((directory / LEASE_JSON).read_bytes())
        return LeaseHolder(int(data["pid"]), str(data["host"]), float(data["started_at"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def live_holder(directory: Path) -> LeaseHolder | None:
    """The live holder of the session's lease, or None when nobody holds it (a dead holder holds nothing)."""
    lock_path = directory / LEASE_LOCK
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(directory) or _UNKNOWN
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _dropped(fd: int, session_id: str) -> None:
    """The lease of a session garbage collected unreleased: its descriptor closed (the lock goes with it)."""
    os.close(fd)
    message = f"session {session_id} was dropped without close() or abandon(): its lease is released now"
    warnings.warn(message, ResourceWarning, stacklevel=1)


class Lease:
    """Held while a process runs or resumes a session. `acquire` raises SessionInUse when a live process has it,
    and StorageIOError (exit 12) naming the session when the lease cannot be written."""

    def __init__(self, directory: Path, session_id: str, fileops: FileOps) -> None:
        self.directory = directory
        self.session_id = session_id
        self._fileops = fileops
        self._fd = -1

    def acquire(self) -> Lease:
        lock_path = self.directory / LEASE_LOCK
        try:
            try:
                fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                # neither atomic nor durable: an empty file that only carries the OS lock. Two creators open the
                # same inode (no temp file renamed over another's lock), and after a power cut nobody holds the
                # lock, so a lost file is simply made again here
                self._fileops.write_file(lock_path, b"", sync=False)
                fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise io_error(exc, f"cannot take the lease of session {self.session_id}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = _read_holder(self.directory) or _UNKNOWN
            raise SessionInUse(self.session_id, holder.pid, holder.host) from None
        self._fd = fd
        self._on_drop = weakref.finalize(self, _dropped, fd, self.session_id)
        self._on_drop.atexit = False  # a process that ends holding it lets the kernel release it
        info = {"pid": os.getpid(), "host": socket.gethostname(), "started_at": time.time()}
        try:
            # atomic, not durable: who holds the lock matters only while the holder lives (the lock itself is the
            # exclusion), and after a power cut nobody does; a lost or empty file reads as an unknown holder
            self._fileops.write_atomic(self.directory / LEASE_JSON, json.dumps(info).encode(), durable=False)
        except OSError as exc:
            self.release()
            raise io_error(exc, f"cannot take the lease of session {self.session_id}") from exc
        except BaseException:
            self.release()
            raise
        return self

    def moved_to(self, directory: Path) -> None:
        """The session's directory was renamed (a creation's staging directory put in place): the lock, held on
        its open file, moved with it."""
        self.directory = directory

    @property
    def held(self) -> bool:
        return self._fd >= 0

    def release(self) -> None:
        if self._fd < 0:
            return
        self._on_drop.detach()
        with contextlib.suppress(OSError):
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = -1
