"""The tools' workspace under chaos: each explored run works on its own copy, seeded with what the golden run's
workspace held at the run's starting point, and the judge compares it with the golden run's (side effects
happened exactly once).

The workspace is the directory a run's file-writing tools use (`RunOptions.scratch_dir`; a Python tool finds it
with `strands_durable.tool_workspace(tool_context)`). It starts as a copy of the directory the user names for
external state (the `strands_chaos_workspace` ini option, `workspace=` of the fixture), empty otherwise. Tools
change it only while they run, so the golden run's workspace is recorded after each tool ran (`tool.executed`),
and only when it changed.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import os
from collections import Counter
from pathlib import Path

from strands_durable.faults.kit.oracle import readable_difference
from strands_durable.store.fileops import FileOps

WORKSPACE_RULE = "workspace"
"""The rule name of a workspace that differs from the golden run's."""

Files = dict[str, bytes]  # path relative to the workspace -> content

_OPS = FileOps()  # workspace copies are scratch files: written through the file layer, without fsync


def read_files(directory: Path | None) -> Files:
    """Every file under `directory` (none when it does not exist), by relative path in path order: what
    `directory.rglob("*")` finds (links to files followed, links to directories not entered), listed with
    `os.scandir` and read without buffering (the explorer reads a workspace after every crash point)."""
    if directory is None:
        return {}
    try:
        with os.scandir(directory) as entries:
            listed = list(entries)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return {}
    found: list[tuple[tuple[str, ...], str]] = []
    _list_entries(listed, (), found)
    found.sort()
    return {os.sep.join(parts): _OPS.read_bytes(path) for parts, path in found}


def _list_entries(
    listed: list[os.DirEntry[str]], parts: tuple[str, ...], found: list[tuple[tuple[str, ...], str]]
) -> None:
    for entry in listed:
        if entry.is_dir(follow_symlinks=False):
            try:
                with os.scandir(entry.path) as entries:
                    inner = list(entries)
            except PermissionError:
                continue
            _list_entries(inner, (*parts, entry.name), found)
        elif entry.is_file():
            found.append(((*parts, entry.name), entry.path))


def prune(directory: Path, files: frozenset[str], dirs: frozenset[str] = frozenset()) -> None:
    """Leave in `directory` only the regular files `files` names and the directories `dirs` names or that lead to
    one of them (paths relative to `directory`): every other entry (a file, a link, a directory with all it holds,
    an entry of another kind) is removed, so a scratch tree a run used can be seeded again in place, by
    difference, instead of being removed and made anew. The files kept are for the caller to rewrite.
    FileNotFoundError when `directory` does not exist."""
    _prune(str(directory), "", files, _leading_dirs(files, dirs))


@functools.lru_cache(maxsize=64)
def _leading_dirs(files: frozenset[str], dirs: frozenset[str]) -> frozenset[str]:
    """`dirs` and every directory that leads to one of `files` (a seed's are the same at every crash point)."""
    wanted = set(dirs)
    for name in files:
        parent = os.path.dirname(name)
        while parent and parent not in wanted:
            wanted.add(parent)
            parent = os.path.dirname(parent)
    return frozenset(wanted)


def _prune(directory: str, prefix: str, files: frozenset[str], dirs: frozenset[str]) -> None:
    with os.scandir(directory) as entries:
        listed = list(entries)
    for entry in listed:
        name = prefix + entry.name
        if entry.is_dir(follow_symlinks=False):
            if name in dirs:
                _prune(entry.path, name + os.sep, files, dirs)
            else:
                _OPS.remove_tree(Path(entry.path))
        elif name not in files or not entry.is_file(follow_symlinks=False):
            _OPS.remove(Path(entry.path))


def write_files(directory: Path, files: Files) -> None:
    """Make `directory` hold exactly `files` (it must not hold anything else yet; a file it holds that `files`
    names is rewritten whole)."""
    _OPS.makedirs(directory, durable=False)
    for name, data in files.items():
        target = directory / name
        _OPS.makedirs(target.parent, durable=False)
        _OPS.write_file(target, data, sync=False)


class WorkspaceHistory:
    """The golden run's workspace after each change: (index of the golden point, files), in the order recorded
    (concurrent tools may record a lower index after a higher one)."""

    def __init__(self, initial: Files) -> None:
        self.changes: list[tuple[int, Files]] = [(-1, initial)]
        self._reach: tuple[list[tuple[int, Files]], list[int]] | None = None  # (of `changes`, running max index)

    def observe(self, index: int, directory: Path) -> bool:
        """Record the workspace as it is at golden point `index` when it changed since the last record (True)."""
        files = read_files(directory)
        if files == self.changes[-1][1]:
            return False
        self.changes.append((index, files))
        return True

    def at(self, index: int) -> Files:
        """The workspace as the golden run left it just before point `index`: the last change recorded before the
        first one at `index` or later. Found by bisection in the running maximum of the changes' indices (the first
        change at `index` or later is where that maximum first reaches `index`), so a lookup costs the same early or
        late in a long run, and changes recorded out of order are read as a scan in recorded order reads them."""
        changes = self.changes
        if self._reach is None or self._reach[0] is not changes or len(self._reach[1]) != len(changes):
            self._reach = (changes, list(itertools.accumulate((at for at, _ in changes), max)))
        return changes[max(bisect.bisect_left(self._reach[1], index), 1) - 1][1]

    @property
    def final(self) -> Files:
        return self.changes[-1][1]

    @property
    def changed(self) -> bool:
        """Whether the tools changed the workspace at all (else every run's workspace trivially equals it)."""
        return len(self.changes) > 1


def workspace_difference(golden: Files, resumed: Files, *, at_most: bool = False) -> str | None:
    """Where the resumed run's workspace differs from the golden run's, as a readable diff; None when equal.
    A file whose lines are the same with only their order changed counts as equal: tools that ran in parallel
    may append in either order. `at_most` (a non-idempotent call's outcome was unknown): a file may miss what the
    golden run wrote, but no line may appear more often than in the golden file (no effect happened twice)."""
    if golden == resumed:
        return None

    def settled(name: str) -> bool:
        if name not in resumed:
            return at_most
        if name not in golden:
            return False
        want, have = Counter(golden[name].splitlines()), Counter(resumed[name].splitlines())
        return want == have or (at_most and not have - want)

    differing = {name for name in golden.keys() | resumed.keys() if not settled(name)}
    if not differing:
        return None

    def view(files: Files) -> dict[str, str]:
        return {name: data.decode("utf-8", "replace") for name, data in files.items() if name in differing}

    return readable_difference(view(golden), view(resumed))
