"""The files tools write in a session's scratch directory, kept with the session on S3.

The scratch directory is local to the machine running the session; before each commit that records a tool's
result or a unit's outcome, the files that changed since the last save are PUT, each under a key of its own:
`sessions/<id>/files/<lease token>/<save number>/<relative path>`. The commit's record carries the change to the
session's *manifest* (file name -> key), so the stored files are never older than the commits, and a file is
what the committed manifest names. A key is written once, by one holder, before the commit that names it: a writer
fenced out after a takeover can still PUT, but only under keys of its own lease that no committed manifest names,
so it can never overwrite the files of the holder that took over. Superseded keys are deleted once the commit
naming their successors has landed; keys no manifest names (a fenced writer's) are swept by the next open.
Opening the session elsewhere makes its local scratch directory equal to the manifest's files first. Sessions
saved before manifests existed kept their files at `sessions/<id>/scratch/<path>`: they are read from there, and
their first save stores every file anew.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from strands_durable.errors import CorruptSession
from strands_durable.store.fileops import FileOps
from strands_durable.store.s3.client import Objects
from strands_durable.store.s3.keys import LEGACY_SCRATCH, SCRATCH

# commits whose events may follow a tool's side effect on the scratch directory
SAVE_KINDS = frozenset({"tool_result", "unit", "status"})

Stamp = tuple[int, int]  # size, mtime_ns
Manifest = dict[str, str]  # a file's name in the scratch directory -> its key under the session's prefix


def apply_delta(manifest: Manifest | None, delta: dict[str, Any] | None) -> Manifest | None:
    """The manifest after a commit record's `scratch` change (`{"put": {name: key}, "gone": [name], "reset"}`)."""
    if delta is None:
        return manifest
    result = {} if manifest is None or delta.get("reset") else dict(manifest)
    result.update(delta.get("put", {}))
    for name in delta.get("gone", ()):
        result.pop(name, None)
    return result


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
    """One session's scratch directory and its files in the bucket, as one writer (lease `token`) sees them.

    `save` PUTs the changed files and returns the manifest change its commit records; `track` follows every
    landed record's change (this writer's and others'); `settle` deletes what this writer's landed change
    superseded; `abandon` deletes what a refused commit's save PUT."""

    def __init__(
        self,
        objects: Objects,
        session_prefix: str,
        directory: Path,
        fileops: FileOps,
        *,
        token: str,
        manifest: Manifest | None,
    ) -> None:
        self.objects = objects
        self.session_prefix = session_prefix
        self.directory = directory
        self.fileops = fileops
        self.token = token
        self.manifest = manifest  # None: the session predates manifests (files under scratch/<path>)
        self._legacy: Manifest = {}  # the files of such a session, as restored
        self._saved: dict[str, Stamp] = {}
        self._saves = 0
        self._pending: tuple[dict[str, Any], dict[str, Stamp]] | None = None  # a save whose commit is not landed
        self._superseded: list[str] = []

    def _view(self) -> Manifest:
        return self._legacy if self.manifest is None else self.manifest

    def save(self) -> dict[str, Any] | None:
        """PUT the files that changed since the last save under new keys of this writer's; the manifest change
        for the commit that follows (None when nothing changed)."""
        current = _local_files(self.directory)
        reset = self.manifest is None
        known = {} if reset else self._saved
        changed = [name for name, stamp in current.items() if known.get(name) != stamp]
        gone = [name for name in known if name not in current]
        if not (changed or gone or (reset and self._legacy)):
            return None
        self._saves += 1
        put = {}
        for name in changed:
            key = f"{SCRATCH}{self.token}/{self._saves}/{name}"
            self.objects.put(self.session_prefix + key, (self.directory / name).read_bytes())
            put[name] = key
        delta: dict[str, Any] = {"put": put, "gone": gone}
        if reset:
            delta["reset"] = True
        self._pending = (delta, current)
        return delta

    def track(self, record: dict[str, Any]) -> None:
        """Follow a landed record's manifest change."""
        delta = record.get("scratch")
        if delta is None:
            return
        before = set(self._view().values())
        self.manifest = apply_delta(self.manifest, delta)
        if self._pending is not None and delta == self._pending[0]:
            self._superseded = sorted(before - set(self.manifest.values()))  # type: ignore[union-attr]
            self._saved, self._pending = self._pending[1], None

    def settle(self) -> None:
        """After this writer's commit landed: delete the keys its manifest change superseded."""
        doomed, self._superseded = self._superseded, []
        if doomed:
            self.objects.delete_many([self.session_prefix + key for key in doomed])

    def abandon(self) -> None:
        """After this writer's commit was refused: delete the keys its save PUT (no commit names them)."""
        if self._pending is not None:
            keys = [self.session_prefix + key for key in self._pending[0]["put"].values()]
            self._pending = None
            self.objects.delete_many(keys)

    def restore(self, *, remove_unknown: bool = True, listing: list[str] | None = None) -> None:
        """Make the local directory hold exactly the manifest's files (another machine's, or this one's after a
        crash): missing or different files are written, files the session never saved are removed; then delete
        the stored keys no manifest names (a fenced writer's). Call it holding the lease, after any fence.
        `remove_unknown=False` (a unit's writer, whose siblings may be saving theirs at the same time): neither
        local files nor stored keys that the manifest does not name are removed. `listing`: the session's keys
        as listed after any fence (an open that wrote none passes its read's listing; else they are listed here)."""

        def under(prefix: str) -> list[str]:
            if listing is not None:
                return [key for key in listing if key.startswith(prefix)]
            return [item.key for item in self.objects.list(prefix)]

        listed = under(self.session_prefix + SCRATCH) if remove_unknown else []
        if self.manifest is None:
            legacy = self.session_prefix + LEGACY_SCRATCH
            self._legacy = {key[len(legacy) :]: key[len(self.session_prefix) :] for key in under(legacy)}
        view = self._view()
        for name, key in view.items():
            parts = name.split("/")
            if not name or name.startswith("/") or any(part in ("", ".", "..") for part in parts):
                raise CorruptSession(
                    f"s3://{self.objects.bucket}/{self.session_prefix}{key}",
                    "not a file name inside the scratch directory",
                )
        local = _local_files(self.directory)
        names = list(view)
        for name, held in zip(
            names, self.objects.get_many([self.session_prefix + view[n] for n in names]), strict=True
        ):
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
        named = {self.session_prefix + key for key in view.values()}
        strays = [key for key in listed if key not in named] if remove_unknown else []
        if strays:
            self.objects.delete_many(strays)
