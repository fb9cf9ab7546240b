"""Simulated power loss: rebuild the session directory as a disk may hold it after a power cut, and resume.

The golden run goes through `RecordingFileOps`; `DiskModel` replays its log and keeps two views of the disk: what
the process sees, and what is durable. The semantics are the conservative ones of ALICE (OSDI'14) and
CrashMonkey (OSDI'18): a file's bytes are durable after fsync/fdatasync of that file; a directory entry
(create, rename, unlink, mkdir, rmdir) is durable after fsync of its directory; `sync()` makes everything
durable; until then any subset of the pending operations may have reached the disk, and the last write may be
torn.

At each persistence point (just before each fsync, fdatasync, directory fsync or sync, and at the end) a
bounded, deterministic set of crash states is built from the durable view plus chosen pending operations:
`lost` (none of them), `all` (every one, what a killed process leaves), `torn` (in order up to the last data
write, which lands half), `prefix` (the first half, in order) and `reorder-j` (all but operation j). Each
distinct state is written to the workspace and resumed in fresh objects; it must reach the golden result or fail
with a clear DurableError, and no commit that returned durable to its caller may be missing (`data-lost`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import Commit, CrashPoints, ToolCall, ToolKey
from strands_durable.errors import DurableError, SessionCompleted, SessionNotFound, exit_code_for
from strands_durable.faults import judge
from strands_durable.faults.common import FaultClass, FaultRun, reset_dir
from strands_durable.faults.golden import ChaosTarget, GoldenRun, run_golden
from strands_durable.faults.observe import run_options
from strands_durable.faults.recording import BARRIERS, Op, RecordingFileOps
from strands_durable.store import LocalStore
from strands_durable.store.fileops import FileOps
from strands_durable.store.wrapping import WrappingStore

FAULT = "power"
DEFAULT_MAX_POINTS = 400  # persistence points explored per workflow (evenly sampled beyond this)
REORDER_SAMPLES = 3  # single dropped operations per point


# -- the disk model -------------------------------------------------------------------------------------------------


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

    def _make_entries_durable(self, directory: Path | None) -> None:
        keep = []
        for p in self.pending:
            if p.kind != "data" and (directory is None or p.directory == directory or p.path.parent == directory):
                _apply_entry(p, self.durable_files, self.durable_dirs)
            else:
                keep.append(p)
        self.pending = keep

    # -- crash states --
    def state(self, kind: str, op_index: int, chosen: list[Pending], torn: Pending | None = None) -> CrashState:
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
            if torn.data is not None:  # a rewrite tears anywhere in the new bytes
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


def crash_states(model: DiskModel, op_index: int) -> list[CrashState]:
    """The bounded, deterministic crash states for a power cut just before op `op_index`."""
    pending = list(model.pending)
    states = [model.state("lost", op_index, []), model.state("all", op_index, pending)]
    data_ops = [i for i, p in enumerate(pending) if p.kind == "data"]
    if data_ops:
        last = data_ops[-1]
        states.append(model.state("torn", op_index, pending[:last], torn=pending[last]))
    if len(pending) >= 3:
        states.append(model.state("prefix", op_index, pending[: len(pending) // 2]))
    if len(pending) >= 2:
        picks = sorted({0, len(pending) // 2, len(pending) - 1})[:REORDER_SAMPLES]
        for j in picks:
            states.append(model.state(f"reorder-{j}", op_index, pending[:j] + pending[j + 1 :]))
    return states


# -- promises: which commits had returned durable to their caller -------------------------------------------------


def promise_store(sessions: Path, ops: RecordingFileOps) -> WrappingStore:
    """A real `LocalStore` on the recording file layer, behind the wrapper store, which marks in the recording the
    moment a session's creation returned (its commits are marked by `mark_promises`)."""

    def created(session: Any, is_new: bool) -> None:
        if is_new:
            ops.mark(("promise", 0, ()))

    return WrappingStore(LocalStore(sessions, fileops=ops), on_open=created)


def mark_promises(bus: CrashPoints, ops: RecordingFileOps) -> None:
    """Mark, in the recording, each commit that returned durable: its seq and the tool results it holds."""

    def promise(point: Commit) -> None:
        if point.site == "store.after_commit" and (point.durable or point.synced):
            ops.mark(("promise", point.seq, point.tool_results))

    bus.subscribe(Commit, promise)


# -- exploring --------------------------------------------------------------------------------------------------------


@dataclass
class PowerRecording:
    """The golden run under the recorder: its log, final journal and the directory it ran in (sessions/, out/ and
    workspace/, the tools' workspace, below it)."""

    golden: GoldenRun
    log: list[Op]
    journal: bytes
    base: Path

    @property
    def scratch(self) -> Path:
        return self.base / "workspace"


def record_golden(target: ChaosTarget, workdir: Path, recorder: RecordingFileOps | None = None) -> PowerRecording:
    """Run the workflow once through a recorder (`run_golden` in `workdir`, its store on the recording file
    layer, marking each commit that returned durable)."""
    ops = recorder or RecordingFileOps()
    golden = run_golden(
        target,
        workdir,
        store_factory=lambda sessions: promise_store(sessions, ops),
        subscribe=lambda bus: mark_promises(bus, ops),
    )
    if golden.failure is not None or golden.comparable["status"] != "completed":
        raise DurableError(f"{target.spec_path}: the recorded golden run ended {golden.comparable['status']}")
    return PowerRecording(golden, list(ops.log), golden.journal, workdir / "golden")


def persistence_points(log: list[Op]) -> list[int]:
    """Op indices just before which power is cut: every barrier, and the end of the log."""
    return [i for i, op in enumerate(log) if op.kind in BARRIERS] + [len(log)]


def enumerate_states(recording: PowerRecording, max_points: int = DEFAULT_MAX_POINTS) -> list[CrashState]:
    """Every crash state of the chosen persistence points, in log order (duplicates included)."""
    points = persistence_points(recording.log)
    chosen = set(_evenly(points, max_points))
    model = DiskModel(recording.base)
    model.dirs.add(recording.scratch)  # made before the run (unrecorded), with the tools' initial files
    model.durable_dirs.add(recording.scratch)
    promised_seq, promised_tools = -1, []
    states: list[CrashState] = []
    for index in range(len(recording.log) + 1):
        if index in chosen:
            for state in crash_states(model, index):
                state.promised_seq = promised_seq
                state.promised_tools = tuple(promised_tools)
                states.append(state)
        if index == len(recording.log):
            break
        op = recording.log[index]
        if op.kind == "mark" and isinstance(op.info, tuple) and op.info[0] == "promise":
            promised_seq = max(promised_seq, int(op.info[1]))
            promised_tools.extend(op.info[2])
        model.apply(index, op)
    return states


def _evenly(items: list[int], limit: int) -> list[int]:
    if len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)] + [items[-1]]


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


def explore_power(
    target: ChaosTarget,
    workdir: Path,
    *,
    max_points: int = DEFAULT_MAX_POINTS,
    recorder: RecordingFileOps | None = None,
    run: FaultRun | None = None,
) -> FaultRun:
    """Power-cut the golden run at every persistence point (bounded), resume each distinct state and judge it.

    `recorder` replaces the recording file operations (a deliberately broken store in the harness's tests).
    """
    run = run or FaultRun(FAULT, target.name)
    recording = record_golden(target, workdir / "power", recorder)
    base = recording.base
    initial = {recording.scratch / name: data for name, data in recording.golden.workspace.at(0).items()}
    verdicts: dict[str, list[tuple[str, str]]] = {}
    for state in enumerate_states(recording, max_points):
        digest = state.digest(base)
        run.explored += 1
        if digest in run.states:
            problems = verdicts[digest]
        else:
            run.states.add(digest)
            materialize(state, base, initial)
            problems = _judge(recording, state, base, run)
            verdicts[digest] = problems
        for rule, detail in problems:
            run.add(state.point, state.kind, rule, detail)
    return run


def _judge(recording: PowerRecording, state: CrashState, base: Path, run: FaultRun) -> list[tuple[str, str]]:
    from strands_durable.runner.run import resume

    golden = recording.golden
    sessions = base / "sessions"
    session_id = golden.target.session_id
    try:
        before = LocalStore(sessions).load(session_id)
    except SessionNotFound:
        if state.promised_seq >= 0:
            return [
                (
                    "data-lost",
                    f"the session is gone after the power cut, though commit {state.promised_seq} had returned durable",
                )
            ]
        run.outcomes["not-created"] += 1
        return []
    except DurableError as exc:
        run.outcomes[f"clean-failure: {exit_code_for(exc)}"] += 1
        return [("needs-repair", f"the session does not load after a power cut: {exc}")]
    problems = _check_promises(recording, state, sessions, before.seq)
    if problems:
        return problems
    tools_run: list[ToolCall] = []
    bus = CrashPoints()
    bus.subscribe(ToolCall, lambda p: tools_run.append(p) if p.site == "tool.before" else None)
    try:
        options = run_options(golden.target, base / "out", bus, scratch_dir=recording.scratch)
        resume(session_id, options, store=LocalStore(sessions))
    except SessionCompleted:
        pass
    except DurableError as exc:
        run.outcomes[f"clean-failure: {exit_code_for(exc)}"] += 1
        return [
            (
                "needs-repair" if exit_code_for(exc) == 17 else "resume-failed",
                f"resume after the power cut failed: {exc}",
            )
        ]
    except Exception as exc:  # anything but a DurableError is an unclean failure
        return [("unclean-failure", f"resume after the power cut raised {type(exc).__name__}: {exc}")]
    run.outcomes["resumed"] += 1
    problems = [
        ("tool-rerun", f"tool call {call.path} ran again though its result had returned durable")
        for call in tools_run
        if call.key in state.promised_tools
    ]
    final = LocalStore(sessions).load(session_id)
    # the tools' files are not compared: what a tool wrote without fsync may be lost with the power, by design
    return problems + judge.completed_like(golden, final)


def _check_promises(recording: PowerRecording, state: CrashState, sessions: Path, seq: int) -> list[tuple[str, str]]:
    """Every commit that had returned durable is in the recovered journal, byte for byte as written."""
    if seq < state.promised_seq:
        return [
            (
                "data-lost",
                f"the journal recovered to commit {seq}, but commit {state.promised_seq} had returned durable",
            )
        ]
    data = LocalStore(sessions).journal_path(recording.golden.target.session_id).read_bytes()
    valid = LocalStore.read_journal_bytes(data).valid_length
    if not recording.journal.startswith(data[:valid]):
        return [("data-lost", "the recovered journal is not a prefix of what the run wrote")]
    return []


FAULT_CLASS = FaultClass(
    FAULT, {"gate": {"max_points": 200}, "full": {"max_points": 5000}}, explore_power, records_own_golden=True
)
