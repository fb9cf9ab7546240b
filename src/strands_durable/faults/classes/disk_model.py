"""The disk model of the power class: a recorded log of file operations replayed into two views of the disk, what
the process sees and what is durable, and the crash states a power cut may leave.

The semantics are the conservative ones of ALICE (OSDI'14) and CrashMonkey (OSDI'18): a file's bytes are durable
after fsync/fdatasync of that file; a directory entry (create, rename, unlink, mkdir, rmdir) is durable after
fsync of its directory; `sync()` makes everything durable; until then any subset of the pending operations may
have reached the disk, and the last write may be torn: cut short, or, for an append spanning three sectors or
more, whole but for one sector in its middle that never reached the disk (it reads as zeros: a complete,
newline-terminated line whose checksum fails).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import ToolKey
from strands_durable.faults.classes.recording import BARRIERS, Op
from strands_durable.faults.kit.scratch import reset_dir
from strands_durable.store.fileops import FileOps

REORDER_SAMPLES = 3  # single dropped operations per point


@dataclass(frozen=True)
class Pending:
    """One operation issued but not yet durable."""

    index: int  # position in the op log
    kind: str  # data | link | rename | unlink | mkdir | rmdir
    path: Path
    dst: Path | None = None
    inode: int = -1
    data: bytes | None = None  # the file's whole content after a write
    start: int = 0  # an append's byte range
    end: int = 0

    @property
    def directory(self) -> Path:
        return (self.dst or self.path).parent


@dataclass
class CrashState:
    """A rebuilt disk: directories and file contents under the workspace, and what had been promised."""

    kind: str
    op_index: int  # the persistence point (op log index) the power was cut before
    dirs: set[Path]
    files: dict[Path, bytes]
    promised_seq: int
    promised_tools: tuple[ToolKey, ...]  # tool calls whose committed result had returned durable

    @property
    def point(self) -> str:
        return f"op[{self.op_index}]"

    def digest(self, base: Path) -> str:
        h = hashlib.sha256()
        for directory in sorted(self.dirs):
            h.update(b"d" + str(directory.relative_to(base)).encode() + b"\0")
        for path in sorted(self.files):
            h.update(b"f" + str(path.relative_to(base)).encode() + b"\0" + hashlib.sha256(self.files[path]).digest())
        return h.hexdigest()


@dataclass
class DiskModel:
    """What the process sees and what is durable, replayed from a recording, under `base` (durable already)."""

    base: Path
    files: dict[Path, int] = field(default_factory=dict)
    dirs: set[Path] = field(default_factory=set)
    content: dict[int, bytearray] = field(default_factory=dict)
    durable_files: dict[Path, int] = field(default_factory=dict)
    durable_dirs: set[Path] = field(default_factory=set)
    durable_content: dict[int, bytes] = field(default_factory=dict)
    pending: list[Pending] = field(default_factory=list)
    _next_inode: int = 0

    def __post_init__(self) -> None:
        self.dirs.add(self.base)
        self.durable_dirs.add(self.base)

    # -- replaying one operation --
    def apply(self, index: int, op: Op) -> None:
        kind = op.kind
        if kind == "mark":
            return
        assert op.path is not None or kind == "sync_all"
        if kind == "create":
            inode = self._inode()
            self.files[op.path] = inode  # type: ignore[index]
            self.content[inode] = bytearray()
            self.pending.append(Pending(index, "link", op.path, inode=inode))  # type: ignore[arg-type]
        elif kind == "write":
            inode = self.files[op.path]  # type: ignore[index]
            self.content[inode] = bytearray(op.data)
            self.pending.append(Pending(index, "data", op.path, inode=inode, data=op.data))  # type: ignore[arg-type]
        elif kind == "append":
            inode = self.files[op.path]  # type: ignore[index]
            start = len(self.content[inode])
            self.content[inode] += op.data
            self.pending.append(Pending(index, "data", op.path, inode=inode, start=start, end=start + len(op.data)))  # type: ignore[arg-type]
        elif kind == "fdatasync" and isinstance(op.info, int):
            self._make_appends_durable(self.files[op.path], op.info)  # type: ignore[index]
        elif kind in ("fsync", "fdatasync"):
            self._make_content_durable(self.files[op.path])  # type: ignore[index]
        elif kind == "truncate":
            inode = self.files[op.path]  # type: ignore[index]
            del self.content[inode][op.size :]
            self._make_content_durable(inode)
        elif kind == "rename":
            _rename(self.files, self.dirs, op.path, op.dst)  # type: ignore[arg-type]
            self.pending.append(Pending(index, "rename", op.path, op.dst))  # type: ignore[arg-type]
        elif kind == "remove":
            self.files.pop(op.path, None)  # type: ignore[arg-type]
            self.pending.append(Pending(index, "unlink", op.path))  # type: ignore[arg-type]
        elif kind == "mkdir":
            self.dirs.add(op.path)  # type: ignore[arg-type]
            self.pending.append(Pending(index, "mkdir", op.path))  # type: ignore[arg-type]
        elif kind == "rmdir":
            self.dirs.discard(op.path)  # type: ignore[arg-type]
            self.pending.append(Pending(index, "rmdir", op.path))  # type: ignore[arg-type]
        elif kind == "fsync_dir":
            self._make_entries_durable(op.path)  # type: ignore[arg-type]
        elif kind == "sync_all":
            for inode in list(self.content):
                self._make_content_durable(inode)
            self._make_entries_durable(None)
        else:
            raise ValueError(f"unknown recorded operation {kind!r}")

    def _inode(self) -> int:
        self._next_inode += 1
        return self._next_inode

    def _make_content_durable(self, inode: int) -> None:
        self.durable_content[inode] = bytes(self.content.get(inode, b""))
        self.pending = [p for p in self.pending if not (p.kind == "data" and p.inode == inode)]

    def _make_appends_durable(self, inode: int, before: int) -> None:
        """An fdatasync that started when the log held `before` operations: the file's data written before that
        is durable; appends logged after it (another thread's, while it ran) stay pending."""
        covered = [p for p in self.pending if p.kind == "data" and p.inode == inode and p.index < before]
        if any(p.data is not None for p in covered) or len(covered) == len(
            [p for p in self.pending if p.kind == "data" and p.inode == inode]
        ):
            self._make_content_durable(inode)  # nothing appended meanwhile (or whole-file writes): all of it
            return
        end = max((p.end for p in covered), default=len(self.durable_content.get(inode, b"")))
        self.durable_content[inode] = bytes(self.content[inode][:end])
        done = {id(p) for p in covered}
        self.pending = [p for p in self.pending if id(p) not in done]

    def _make_entries_durable(self, directory: Path | None) -> None:
        keep = []
        for p in self.pending:
            if p.kind != "data" and (directory is None or p.directory == directory or p.path.parent == directory):
                _apply_entry(p, self.durable_files, self.durable_dirs)
            else:
                keep.append(p)
        self.pending = keep

    # -- crash states --
    def state(
        self, kind: str, op_index: int, chosen: list[Pending], torn: Pending | None = None, *, middle: bool = False
    ) -> CrashState:
        """The disk after the `chosen` pending operations and a `torn` last one (cut in half, or with `middle` an
        append that lost one middle sector)."""
        files = dict(self.durable_files)
        dirs = set(self.durable_dirs)
        content = {inode: bytes(data) for inode, data in self.durable_content.items()}
        for p in chosen:
            if p.kind == "data":
                content[p.inode] = self._data_after(p, content.get(p.inode, b""))
            else:
                _apply_entry(p, files, dirs)
        if torn is not None:
            whole = self._data_after(torn, content.get(torn.inode, b""))
            before = content.get(torn.inode, b"")
            if middle:  # an append whose sectors all landed but one in its middle
                lost = middle_sector(torn)
                assert lost is not None, "only an append of three sectors or more tears in its middle"
                content[torn.inode] = whole[: lost[0]] + bytes(lost[1] - lost[0]) + whole[lost[1] : torn.end]
            elif torn.data is not None:  # a rewrite tears anywhere in the new bytes
                content[torn.inode] = whole[: len(whole) // 2]
            else:  # an append tears inside the appended bytes
                keep = min(len(before), torn.start) + (torn.end - torn.start) // 2
                content[torn.inode] = whole[:keep]
        reachable = _reachable_dirs(dirs, self.base)
        out = {path: content.get(inode, b"") for path, inode in files.items() if path.parent in reachable}
        return CrashState(kind, op_index, reachable, out, -1, ())

    def _data_after(self, p: Pending, durable: bytes) -> bytes:
        if p.data is not None:
            return p.data
        current = self.content.get(p.inode, bytearray())
        return bytes(current[: p.end]) if len(durable) <= p.end else durable


def _rename(files: dict[Path, Any], dirs: set[Path], src: Path, dst: Path) -> None:
    if src in dirs:  # a directory: move every entry under it
        for path in [d for d in dirs if d == src or src in d.parents]:
            dirs.discard(path)
            dirs.add(dst / path.relative_to(src))
        for path in [f for f in files if src in f.parents]:
            files[dst / path.relative_to(src)] = files.pop(path)
        return
    if src in files:
        files[dst] = files.pop(src)


def _apply_entry(p: Pending, files: dict[Path, int], dirs: set[Path]) -> None:
    if p.kind == "link":
        files[p.path] = p.inode
    elif p.kind == "rename":
        _rename(files, dirs, p.path, p.dst)  # type: ignore[arg-type]
    elif p.kind == "unlink":
        files.pop(p.path, None)
    elif p.kind == "mkdir":
        dirs.add(p.path)
    elif p.kind == "rmdir":
        dirs.discard(p.path)


def _reachable_dirs(dirs: set[Path], base: Path) -> set[Path]:
    """Directories whose every ancestor up to `base` exists (an entry in a lost directory is lost with it)."""
    return {
        d
        for d in dirs
        if d == base or (base in d.parents and all(a in dirs for a in d.parents if base in a.parents or a == base))
    }


SECTOR = 512


def middle_sector(p: Pending) -> tuple[int, int] | None:
    """The file range of the first whole sector inside append `p` that holds neither its first nor its last byte
    (None for a rewrite, or an append too short to have one)."""
    if p.data is not None:
        return None
    start = (p.start // SECTOR + 1) * SECTOR
    return (start, start + SECTOR) if start + SECTOR < p.end else None


def crash_states(model: DiskModel, op_index: int) -> list[CrashState]:
    """The bounded, deterministic crash states for a power cut just before op `op_index`."""
    pending = list(model.pending)
    states = [model.state("lost", op_index, []), model.state("all", op_index, pending)]
    data_ops = [i for i, p in enumerate(pending) if p.kind == "data"]
    if data_ops:
        last = data_ops[-1]
        states.append(model.state("torn", op_index, pending[:last], torn=pending[last]))
        if middle_sector(pending[last]) is not None:
            states.append(model.state("torn-middle", op_index, pending[:last], torn=pending[last], middle=True))
    if len(pending) >= 3:
        states.append(model.state("prefix", op_index, pending[: len(pending) // 2]))
    if len(pending) >= 2:
        picks = sorted({0, len(pending) // 2, len(pending) - 1})[:REORDER_SAMPLES]
        for j in picks:
            states.append(model.state(f"reorder-{j}", op_index, pending[:j] + pending[j + 1 :]))
    return states


def persistence_points(log: list[Op]) -> list[int]:
    """Op indices just before which power is cut: every barrier, and the end of the log."""
    return [i for i, op in enumerate(log) if op.kind in BARRIERS] + [len(log)]


def materialize(state: CrashState, base: Path, initial: dict[Path, bytes] | None = None) -> None:
    """Make `base` hold exactly the crash state's directories and files (over the `initial` files the run started
    with: the tools' external state, written before the recording)."""
    ops = FileOps()
    reset_dir(base)
    for path, data in (initial or {}).items():
        ops.makedirs(path.parent, durable=False)
        ops.write_file(path, data, sync=False)
    for directory in sorted(state.dirs, key=lambda d: len(d.parts)):
        if directory != base:
            ops.mkdir(directory)
    for path, data in state.files.items():
        ops.write_file(path, data, sync=False)
