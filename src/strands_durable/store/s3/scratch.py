"""The files tools write in a session's scratch directory, kept with the session on S3.

The scratch directory is local to the machine running the session; before each commit that records a tool's
result or a unit's outcome, the files that changed since the last save are PUT under
`sessions/<id>/scratch/<relative path>` (and removed ones deleted), so the stored files are never older than the
commits. Opening the session elsewhere makes its local scratch directory equal to the stored files first.
"""

from __future__ import annotations

import os
from pathlib import Path

from strands_durable.errors import CorruptSession
from strands_durable.store.fileops import FileOps
from strands_durable.store.s3.client import Objects

# commits whose events may follow a tool's side effect on the scratch directory
SAVE_KINDS = frozenset({"tool_result", "unit", "status"})

Stamp = tuple[int, int]  # size, mtime_ns


def _local_files(directory: Path) -> dict[str, Stamp]:
    files: dict[str, Stamp] = {}
    if not directory.is_dir():
        return files
    for root, _dirs, names in os.walk(directory):
        for name in names:
            path = Path(root) / name
            stat = path.stat()
            files[path.relative_to(directory).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return files


class ScratchMirror:
    """One session's scratch directory and its copy under `prefix` in the bucket."""

    def __init__(self, objects: Objects, prefix: str, directory: Path, fileops: FileOps) -> None:
        self.objects = objects
        self.prefix = prefix
        self.directory = directory
        self.fileops = fileops
        self._saved: dict[str, Stamp] = {}

    def save(self) -> None:
        """PUT the files that changed since the last save, delete the stored ones that are gone."""
        current = _local_files(self.directory)
        for name, stamp in current.items():
            if self._saved.get(name) != stamp:
                self.objects.put(self.prefix + name, (self.directory / name).read_bytes())
        gone = [self.prefix + name for name in self._saved if name not in current]
        if gone:
            self.objects.delete_many(gone)
        self._saved = current

    def restore(self, *, remove_unknown: bool = True) -> None:
        """Make the local directory hold exactly the stored files (another machine's, or this one's after a
        crash): missing or different files are written, files the session never saved are removed (unless
        `remove_unknown` is False: a unit's writer, whose siblings on this machine may be writing theirs)."""
        stored = [listed.key for listed in self.objects.list(self.prefix)]
        names = [key[len(self.prefix) :] for key in stored]
        for key, name in zip(stored, names, strict=True):
            parts = name.split("/")
            if not name or name.startswith("/") or any(part in ("", ".", "..") for part in parts):
                raise CorruptSession(
                    f"s3://{self.objects.bucket}/{key}", "not a file name inside the scratch directory"
                )
        local = _local_files(self.directory)
        for name, held in zip(names, self.objects.get_many(stored), strict=True):
            if held is None:
                continue
            target = self.directory / name
            if name in local and target.read_bytes() == held[0]:
                continue
            self.fileops.makedirs(target.parent)
            self.fileops.write_atomic(target, held[0])
        for name in set(local) - set(names) if remove_unknown else ():
            self.fileops.remove(self.directory / name)
        self._saved = _local_files(self.directory)
