"""Disk faults (F4 without power loss): ENOSPC, EIO and EROFS on write, fsync and rename; damaged files.

`FaultyFileOps` fails the N-th write, fsync or rename (a write that fails has written half its bytes, as a disk
that fills up mid-write does) and, like a full or read-only disk, every one after it. SQLite's method enumerates
the points: fail at operation 1, 2, ... until a run completes without reaching N. Each scenario pauses the run
after its first unit (a clean close, so the resume also rewrites readable files of a closed session) and
resumes it. A faulted run must fail cleanly: a DurableError with exit 12 whose message names the cause; once the
fault is gone a plain resume completes identical to the golden run.

`damage_files` breaks a cleanly paused session on purpose: leftover temp files (removed on open, the resume
completes), a torn journal tail (cut off, the resume completes), a truncated, corrupted or missing message file
(exit 17 naming the file; `repair_session` rebuilds it, then the resume completes) and a corrupt journal record
followed by good ones (exit 17 naming journal.log: the journal is the truth and cannot be rebuilt).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from strands_durable.crashpoints import CrashPoint, CrashPoints
from strands_durable.errors import DurableError, ExitCode, SessionNotFound, exit_code_for
from strands_durable.faults.kit import judge
from strands_durable.faults.kit.findings import FaultClass, FaultRun
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.observe import run_options
from strands_durable.faults.kit.runs import paused_after_first_unit, run_golden
from strands_durable.faults.kit.scratch import reset_dir
from strands_durable.faults.kit.stores import FileStore, file_store
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.store.fileops import AppendHandle, FileOps

FAULT = "disk"
ERRNOS = {"ENOSPC": errno.ENOSPC, "EIO": errno.EIO, "EROFS": errno.EROFS}
MAX_OPS = 5000  # a scenario that never stops reaching N is a harness bug, not a long run


class FaultyFileOps(FileOps):
    """Real file operations that raise `OSError(code)` at the `fail_at`-th write, fsync or rename (1-based) and
    at every one after it (`sticky`, a full or read-only disk), until `heal()`."""

    def __init__(self, fail_at: int | None, code: int = errno.ENOSPC, *, sticky: bool = True) -> None:
        self.fail_at = fail_at
        self.code = code
        self.sticky = sticky
        self.seen = 0
        self.fired: str | None = None  # "<kind> <path>" of the first injected failure
        self._ops = FileOps()  # the real operations, reached when no fault is injected

    def heal(self) -> None:
        self.fail_at = None

    def _hit(self, kind: str, path: Path | None) -> bool:
        if self.fail_at is None:
            return False
        self.seen += 1
        if self.seen == self.fail_at or (self.sticky and self.fired is not None):
            self.fired = self.fired or f"{kind} {path}"
            return True
        return False

    def _error(self, path: Path | None) -> OSError:
        return OSError(self.code, os.strerror(self.code), str(path) if path else None)

    def write_file(self, path: Path, data: bytes, *, sync: bool) -> None:
        if self._hit("write", path):
            self._ops.write_file(path, data[: len(data) // 2], sync=False)  # the disk filled up mid-write
            raise self._error(path)
        if sync and self._hit("fsync", path):
            self._ops.write_file(path, data, sync=False)  # written, but its fsync fails
            raise self._error(path)
        self._ops.write_file(path, data, sync=sync)

    def rename(self, src: Path, dst: Path) -> None:
        if self._hit("rename", dst):
            raise self._error(dst)
        self._ops.rename(src, dst)

    def fsync_dir(self, path: Path) -> None:
        if self._hit("fsync", path):
            raise self._error(path)
        self._ops.fsync_dir(path)

    def mkdir(self, path: Path) -> None:
        if self._hit("write", path):
            raise self._error(path)
        self._ops.mkdir(path)

    def truncate(self, path: Path, size: int) -> None:
        if self._hit("write", path):
            raise self._error(path)
        self._ops.truncate(path, size)

    def sync_all(self) -> None:
        if self._hit("fsync", None):
            raise self._error(None)
        self._ops.sync_all()

    def open_append(self, path: Path) -> AppendHandle:
        return _FaultyAppender(self, path, self._ops.open_append(path))


class _FaultyAppender:
    def __init__(self, owner: FaultyFileOps, path: Path, inner: AppendHandle) -> None:
        self._owner = owner
        self._path = path
        self._inner = inner

    def append(self, data: bytes) -> None:
        if self._owner._hit("write", self._path):
            self._inner.append(data[: len(data) // 2])
            raise self._owner._error(self._path)
        self._inner.append(data)

    def sync(self) -> None:
        if self._owner._hit("fsync", self._path):
            raise self._owner._error(self._path)
        self._inner.sync()

    def close(self) -> None:
        self._inner.close()


# -- the scenario: run, pause after the first unit, resume ------------------------------------------------------


def paused_then_resumed(
    target: ChaosTarget, sessions: Path, out_dir: Path, fileops: FileOps, scratch: Path | None = None
) -> None:
    """Run until the first unit is committed, stop there (a clean close), then resume to the end."""
    from strands_durable.agent.durable import StopRequested
    from strands_durable.runner.run import resume, run_workflow

    bus = CrashPoints()
    units_done: list[CrashPoint] = []
    bus.subscribe(lambda p: units_done.append(p) if p.site == "unit.after" else None)
    store = file_store(sessions, fileops=fileops)
    try:
        run_workflow(
            target.spec_path,
            run_options(target, out_dir, bus, scratch_dir=scratch, stop_requested=lambda: bool(units_done)),
            store=store,
            session_id=target.session_id,
        )
        return
    except StopRequested:
        pass
    resume(target.session_id, run_options(target, out_dir, CrashPoints(), scratch_dir=scratch), store=store)


def explore_disk(
    target: ChaosTarget,
    workdir: Path,
    *,
    errnos: tuple[str, ...] = ("ENOSPC", "EIO", "EROFS"),
    stride: int = 1,
    every_errno: bool = True,
    damage: bool = True,
    golden: WorkflowGoldenRun | None = None,
    run: FaultRun | None = None,
    fileops_factory: type[FaultyFileOps] = FaultyFileOps,
) -> FaultRun:
    """Fail operation N = 1, 1+stride, ... with each errno (or one errno per N, rotating, unless
    `every_errno`) until a run completes without reaching N; then damage files of a paused session."""
    run = run or FaultRun(FAULT, target.name)
    golden = (golden or run_golden(target, workdir / "golden")).require_completed()
    workspace = workdir / "disk"
    fail_at = 1
    while fail_at < MAX_OPS:
        names = errnos if every_errno else (errnos[(fail_at // stride) % len(errnos)],)
        reached = False
        for name in names:
            reached = fail_at_op(golden, fail_at, name, workspace, run, fileops_factory) or reached
        if not reached:
            break
        fail_at += stride
    if damage:
        damage_files(golden, workspace, run)
    return run


def fail_at_op(
    golden: WorkflowGoldenRun,
    fail_at: int,
    errno_name: str,
    workspace: Path,
    run: FaultRun,
    fileops_factory: type[FaultyFileOps] = FaultyFileOps,
) -> bool:
    """One scenario with a fault at op `fail_at`; False when the scenario completed without reaching it.

    A clean failure is a StorageIOError, or an OSError (the CLI prints either as one line and exits 12), whose
    message carries the errno's text."""
    reset_dir(workspace)
    sessions, out_dir = workspace / "sessions", workspace / "out"
    scratch = golden.seed_workspace(workspace / "workspace")
    ops = fileops_factory(fail_at, ERRNOS[errno_name])
    point = f"op[{fail_at}]"
    try:
        paused_then_resumed(golden.target, sessions, out_dir, ops, scratch)
        failure: BaseException | None = None
    except BaseException as exc:  # judged below: only a DurableError with exit 12 is a clean failure
        failure = exc
    if ops.fired is None:
        if failure is not None:
            run.add(point, errno_name, "unclean-failure", f"failed without an injected fault: {failure!r}")
        return False
    run.explore_at(point)
    variant = f"{errno_name}@{ops.fired.split(' ', 1)[0]}"
    if failure is None:
        run.outcomes["completed despite the fault"] += 1
    elif not isinstance(failure, (DurableError, OSError)) or exit_code_for(failure) != int(ExitCode.IO):
        run.add(
            point,
            variant,
            "unclean-failure",
            f"{ops.fired}: expected exit 12, got {type(failure).__name__} (exit {exit_code_for(failure)}): {failure}",
        )
        return True
    elif os.strerror(ERRNOS[errno_name]) not in str(failure):
        run.add(point, variant, "unclear-message", f"the message does not name the cause: {failure}")
    else:  # a DurableError, or an OSError the CLI reports the same way (one line, exit 12)
        run.outcomes[f"clean-failure: 12 ({type(failure).__name__})"] += 1
    _resume_healed(golden, sessions, out_dir, point, variant, run)
    return True


def _resume_healed(
    golden: WorkflowGoldenRun, sessions: Path, out_dir: Path, point: str, variant: str, run: FaultRun
) -> None:
    """The fault is gone: resume (if not completed) and compare with the golden run."""
    from strands_durable.runner.run import resume

    store = file_store(sessions)
    try:
        state = store.load(golden.target.session_id)
    except SessionNotFound:
        run.outcomes["failed before the session existed"] += 1
        return
    except DurableError as exc:
        run.add(point, variant, "unrecoverable", f"after the fault the session does not load: {exc}")
        return
    run.states.add(f"{state.seq}:{state.status}:{point}")
    if state.status != "completed":
        try:
            options = run_options(golden.target, out_dir, CrashPoints(), scratch_dir=out_dir.parent / "workspace")
            resume(golden.target.session_id, options, store=store)
        except DurableError as exc:
            run.add(
                point,
                variant,
                "unrecoverable",
                f"the resume after the fault was gone failed (exit {exit_code_for(exc)}): {exc}",
            )
            return
    run.outcomes["resumed"] += 1
    run.judged(
        point,
        variant,
        judge.completed_on_disk(golden, sessions, golden.target.session_id, out_dir.parent / "workspace"),
    )


# -- damaged files of a paused session ----------------------------------------------------------------------------

DAMAGE = (
    "temp-files",
    "torn-journal-tail",
    "truncated-message",
    "corrupt-message",
    "missing-message",
    "corrupt-journal",
)


def damage_files(golden: WorkflowGoldenRun, workspace: Path, run: FaultRun, kinds: tuple[str, ...] = DAMAGE) -> None:
    for kind in kinds:
        damage_one(golden, kind, workspace, run)


def damage_one(golden: WorkflowGoldenRun, kind: str, workspace: Path, run: FaultRun) -> None:
    from strands_durable.operations import repair_session
    from strands_durable.runner.run import resume

    reset_dir(workspace)
    sessions, out_dir = workspace / "sessions", workspace / "out"
    scratch = golden.seed_workspace(workspace / "workspace")
    directory = paused_after_first_unit(golden, sessions, out_dir, scratch)
    ops = FileOps()
    point, variant = "paused", kind
    run.explore_at(point)
    damaged = _damage(ops, file_store(sessions), golden.target.session_id, kind)
    needs_repair = kind in ("truncated-message", "corrupt-message", "missing-message")
    fatal = kind == "corrupt-journal"
    options = run_options(golden.target, out_dir, CrashPoints(), scratch_dir=scratch)
    try:
        resume(golden.target.session_id, options, store=file_store(sessions))
        failure: DurableError | None = None
    except DurableError as exc:
        failure = exc
    if needs_repair or fatal:
        if (
            failure is None
            or exit_code_for(failure) != int(ExitCode.SESSION_UNUSABLE)
            or damaged.name not in str(failure)
        ):
            run.add(point, variant, "undetected-damage", f"expected exit 17 naming {damaged.name}, got {failure!r}")
            return
        run.outcomes["clean-failure: 17"] += 1
        if fatal:
            return
        try:
            repair_session(file_store(sessions), golden.target.session_id)
            resume(golden.target.session_id, options, store=file_store(sessions))
        except DurableError as exc:
            run.add(point, variant, "repair", f"after `sessions repair` the session still fails: {exc}")
            return
    elif failure is not None:
        run.add(point, variant, "unrecoverable", f"the resume failed (exit {exit_code_for(failure)}): {failure}")
        return
    run.outcomes["resumed"] += 1
    if kind == "temp-files":
        leftovers = [p for p in directory.rglob("*.tmp")]
        if leftovers:
            run.add(point, variant, "temp-files", f"temp files left after the resume: {[p.name for p in leftovers]}")
    run.judged(point, variant, judge.completed_on_disk(golden, sessions, golden.target.session_id, scratch))


def _damage(ops: FileOps, store: FileStore, session_id: str, kind: str) -> Path:
    """Break the session's files as `kind` says; returns the file that was damaged."""
    directory, journal = store.directory_of(session_id), store.journal_path(session_id)
    if kind == "temp-files":
        target = directory / ".session.json.dead0001.tmp"
        ops.write_file(target, b'{"half": ', sync=False)
        agents = store.conversation_dirs(session_id)
        ops.write_file(agents[0] / ".agent.json.dead0002.tmp", b"", sync=False)
        return target
    if kind == "torn-journal-tail":
        handle = ops.open_append(journal)
        handle.append(b'0badc0de {"seq": 99, "ev')
        handle.close()
        return journal
    if kind == "corrupt-journal":
        data = bytearray(journal.read_bytes())
        second = data.index(b"\n") + 1
        data[second + 12] ^= 0x01  # one flipped bit in the second record, with good records after it
        ops.write_file(journal, bytes(data), sync=False)
        return journal
    messages = store.message_files(session_id, 1)
    target = messages[0]
    if kind == "truncated-message":
        ops.write_file(target, target.read_bytes()[:17], sync=False)
    elif kind == "corrupt-message":
        ops.write_file(
            target, b'{"message_id": 1, "unit": "x", "message": {"role": "user", "content": []}}', sync=False
        )
    elif kind == "missing-message":
        ops.remove(target)
    return target


FAULT_CLASS = FaultClass(
    FAULT, {"gate": {"stride": 3, "every_errno": False}, "full": {"stride": 1, "every_errno": True}}, explore_disk
)
