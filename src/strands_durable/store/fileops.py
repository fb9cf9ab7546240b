"""The one file-operations layer: every byte the project writes goes through a `FileOps` implementation.

The real implementation makes writes durable (temp file in the same directory, fsync, rename, directory fsync);
recording and faulty implementations replace it in the chaos harness. A test fails if code elsewhere writes files.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "TEMP_SUFFIX",
    "AppendHandle",
    "FileOps",
    "is_temp_file",
    "machine_boot_id",
    "temp_files",
]

FILE_MODE = 0o600
DIR_MODE = 0o700
TEMP_SUFFIX = ".tmp"


class AppendHandle(Protocol):
    def append(self, data: bytes) -> None: ...

    def sync(self) -> None: ...

    def close(self) -> None: ...


class FileOps:
    """Durable local file operations. Subclasses override single operations to record or inject faults."""

    # -- primitives ---------------------------------------------------------------------------------
    def write_file(self, path: Path, data: bytes, *, sync: bool) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, FILE_MODE)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def rename(self, src: Path, dst: Path) -> None:
        os.replace(src, dst)

    def fsync_dir(self, path: Path) -> None:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def remove(self, path: Path) -> None:
        os.unlink(path)

    def rmdir(self, path: Path) -> None:
        os.rmdir(path)

    def mkdir(self, path: Path) -> None:
        os.mkdir(path, DIR_MODE)

    def truncate(self, path: Path, size: int) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        finally:
            os.close(fd)

    def open_append(self, path: Path) -> AppendHandle:
        return _Appender(path)

    def sync_all(self) -> None:
        """Flush every dirty page to stable storage (one barrier for many lazily written files)."""
        os.sync()

    # -- the machine ------------------------------------------------------------------------------
    def boot_id(self) -> str | None:
        """This boot of the machine whose page cache holds what was written here (None: unknown). A file written
        without fsync is what every reader gets until the id changes: only a power cut or a reboot loses it."""
        return machine_boot_id()

    def read_bytes(self, path: Path | str) -> bytes:
        """The whole file, unbuffered: one read of its size (then to the end, should it have grown)."""
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            chunks = [os.read(fd, os.fstat(fd).st_size + 1)]
            while chunks[-1]:
                chunks.append(os.read(fd, 1 << 16))
            return b"".join(chunks)
        finally:
            os.close(fd)

    def holds(self, path: str, data: bytes) -> bool:
        """Whether the file at `path` holds exactly `data` (False when it is missing, unreadable or different).
        Reads at most one byte more than `data`, unbuffered: a longer file differs in that byte, and a read that
        comes back short reads as different, so the caller writes the file again."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            return os.read(fd, len(data) + 1) == data
        except OSError:
            return False
        finally:
            os.close(fd)

    # -- compositions (built only from the primitives above, so a subclass sees each step) ---------
    def write_atomic(self, path: Path, data: bytes, *, durable: bool = True) -> None:
        """Replace `path` with `data` atomically: temp file, (fsync), rename, (directory fsync)."""
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
        try:
            self.write_file(tmp, data, sync=durable)
            self.rename(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                self.remove(tmp)
            raise
        if durable:
            self.fsync_dir(path.parent)

    def makedirs(self, path: Path, *, durable: bool = True) -> None:
        """Create `path` and missing parents (mode 0700), fsyncing each parent that gained an entry (`durable`)."""
        missing: list[Path] = []
        probe = path
        while not probe.exists():
            missing.append(probe)
            probe = probe.parent
        for directory in reversed(missing):
            try:
                self.mkdir(directory)
            except FileExistsError:
                continue
            if durable:
                self.fsync_dir(directory.parent)

    def remove_tree(self, path: Path) -> None:
        """Delete a directory tree bottom-up through the primitives (a subclass sees each removal). A symbolic
        link is removed as a link, never followed: `path` itself when it is one, and every link inside the tree
        (to a directory or a file), so nothing outside the tree is touched."""
        if path.is_symlink():
            self.remove(path)
            self.fsync_dir(path.parent)
            return
        plain = type(self).remove is FileOps.remove and type(self).rmdir is FileOps.rmdir
        for root, dirs, files in os.walk(path, topdown=False):  # never descends into a link to a directory
            if plain:  # the same unlinks without a Path per entry (the chaos explorer clears a tree per point)
                for name in files:
                    os.unlink(os.path.join(root, name))
                for name in dirs:
                    entry = os.path.join(root, name)
                    if os.path.islink(entry):
                        os.unlink(entry)
                    else:
                        os.rmdir(entry)
                continue
            base = Path(root)
            for name in files:
                self.remove(base / name)
            for name in dirs:
                entry = base / name
                if entry.is_symlink():
                    self.remove(entry)
                else:
                    self.rmdir(entry)
        self.rmdir(path)
        self.fsync_dir(path.parent)


class _Appender:
    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, FILE_MODE)
        self._on_drop = weakref.finalize(self, os.close, self._fd)  # a session dropped unclosed leaks no descriptor
        self._on_drop.atexit = False

    def append(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def sync(self) -> None:
        os.fdatasync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            self._on_drop.detach()
            os.close(self._fd)
            self._fd = -1


def is_temp_file(name: str) -> bool:
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


@functools.cache
def machine_boot_id() -> str | None:
    """Linux's random id of the running boot (a new one after every reboot), read once; None elsewhere."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip() or None
    except OSError:
        return None


def temp_files(directory: Path, *, skip: str) -> Iterator[Path]:
    """The temp files anywhere under `directory`, except under directories named `skip` (a session's backups).
    Reads each directory once (`os.scandir`, whose entries know their type), as `os.walk` does without following
    links to directories, and without its per-directory lists; a directory that cannot be read is passed over."""
    pending = [str(directory)]
    while pending:
        found: list[str] = []
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    if entry.is_dir():
                        if entry.name != skip and not entry.is_symlink():
                            pending.append(entry.path)
                    elif is_temp_file(entry.name):
                        found.append(entry.path)
        except OSError:
            pass
        yield from map(Path, found)  # once the directory is closed: the caller may remove them
