"""The harness's own scratch files (copies, markers, reports of a child): not session data, written through the
project's file-operations layer without fsync."""

from __future__ import annotations

from pathlib import Path

from strands_durable.store.fileops import FileOps

_SCRATCH = FileOps()


def reset_dir(path: Path) -> None:
    """Remove `path` (through the file-operations layer) and create it empty."""
    if path.exists():
        _SCRATCH.remove_tree(path)
    _SCRATCH.makedirs(path, durable=False)


def write_scratch(path: Path, data: bytes) -> None:
    """A harness file (markers, reports), written through the file-operations layer without fsync."""
    _SCRATCH.makedirs(path.parent, durable=False)
    _SCRATCH.write_file(path, data, sync=False)


def remove_scratch(path: Path) -> None:
    """Remove a harness file if it is there (through the file-operations layer)."""
    if path.exists():
        _SCRATCH.remove(path)
