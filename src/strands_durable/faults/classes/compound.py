"""Compound faults (F7): a second death while resuming, and a death in the middle of `sessions repair`.

`crash during resume`: a child is SIGKILLed at crash point A of a fresh run, a resuming child is SIGKILLed at
the m-th crash point of its resume, and a last resume must still complete identical to the golden run with no
committed tool run twice.

`crash during repair`: a cleanly paused session gets a broken stored history (a blank text block, committed as
a new generation) and a damaged message file; `repair_session` runs in a child that SIGKILLs itself before its
n-th file operation, for n = 1, 2, ... until a repair completes without reaching n (SQLite's method). After
each death a second repair must succeed, and the session then resumes identical to the golden run.
"""

from __future__ import annotations

import copy
import os
import signal
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoint, CrashPoints
from strands_durable.errors import DurableError
from strands_durable.faults.kit import judge
from strands_durable.faults.kit.findings import FaultClass, FaultRun
from strands_durable.faults.kit.forking import ChildExit, run_in_child
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.ledger import ToolLedger
from strands_durable.faults.kit.observe import run_options
from strands_durable.faults.kit.runs import (
    crashing_run,
    journal_digest,
    paused_after_first_unit,
    resuming_run,
    run_golden,
    wait_for_threads,
)
from strands_durable.faults.kit.scratch import reset_dir
from strands_durable.faults.kit.stores import file_store
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.store import events
from strands_durable.store.fileops import AppendHandle, FileOps

FAULT = "compound"
MAX_OPS = 2000


# -- a second death while resuming ------------------------------------------------------------------------------


def _dying_resume(
    target: ChaosTarget, sessions: Path, out_dir: Path, ledger: ToolLedger, nth: int, scratch: Path
) -> int:
    """A resume that SIGKILLs itself at the `nth` crash point it emits (exit 0 when it completes first)."""
    from strands_durable.runner.run import resume

    bus = CrashPoints()
    ledger.subscribe(bus)
    seen = [0]

    def at_point(point: CrashPoint) -> None:
        seen[0] += 1
        if seen[0] == nth:
            os.kill(os.getpid(), signal.SIGKILL)

    bus.subscribe(at_point)
    resume(target.session_id, run_options(target, out_dir, bus, scratch_dir=scratch), store=file_store(sessions))
    return 0


def crash_during_resume(golden: WorkflowGoldenRun, first: str, nth: int, workspace: Path, run: FaultRun) -> None:
    reset_dir(workspace)
    target = golden.target
    scratch = golden.seed_workspace(workspace / "workspace")
    sessions, out_dir, ledger = (
        workspace / "sessions",
        workspace / "out",
        ToolLedger(workspace / "tools.log", durable=False),
    )
    point, variant = first, f"resume-killed-at[{nth}]"
    run.explore_at(point)
    ended = run_in_child(
        lambda: crashing_run(target, sessions, out_dir, ledger, first, signal.SIGKILL, scratch=scratch)
    )
    if ended != ChildExit(None, signal.SIGKILL):
        run.add(point, variant, "not-fired", f"the first child ended with {ended.describe()}")
        return
    ended = run_in_child(lambda: _dying_resume(target, sessions, out_dir, ledger, nth, scratch))
    if ended not in (ChildExit(None, signal.SIGKILL), ChildExit(0, None)):
        run.add(point, variant, "resume-failed", f"the first resume ended with {ended.describe()}")
        return
    run.states.add(journal_digest(file_store(sessions).journal_bytes(target.session_id)))
    try:
        if file_store(sessions).load(target.session_id).status != "completed":
            resuming_run(target, sessions, out_dir, ledger, scratch=scratch)
            wait_for_threads()
    except DurableError as exc:
        run.add(point, variant, "resume-failed", f"the last resume failed: {exc}")
        return
    run.outcomes["resumed after two deaths"] += 1
    run.judged(point, variant, judge.completed_on_disk(golden, sessions, golden.target.session_id, scratch))
    run.judged(point, variant, ledger.reruns(golden))


# -- a death during repair ----------------------------------------------------------------------------------------


class KillingFileOps(FileOps):
    """Real file operations; the process SIGKILLs itself just before its `kill_at`-th primitive (1-based)."""

    def __init__(self, kill_at: int) -> None:
        self.kill_at = kill_at
        self.seen = 0
        self._ops = FileOps()  # the real operations

    def _step(self) -> None:
        self.seen += 1
        if self.seen == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def write_file(self, path: Path, data: bytes, *, sync: bool) -> None:
        self._step()
        self._ops.write_file(path, data, sync=sync)

    def rename(self, src: Path, dst: Path) -> None:
        self._step()
        self._ops.rename(src, dst)

    def fsync_dir(self, path: Path) -> None:
        self._step()
        self._ops.fsync_dir(path)

    def remove(self, path: Path) -> None:
        self._step()
        self._ops.remove(path)

    def rmdir(self, path: Path) -> None:
        self._step()
        self._ops.rmdir(path)

    def mkdir(self, path: Path) -> None:
        self._step()
        self._ops.mkdir(path)

    def truncate(self, path: Path, size: int) -> None:
        self._step()
        self._ops.truncate(path, size)

    def sync_all(self) -> None:
        self._step()
        self._ops.sync_all()

    def open_append(self, path: Path) -> AppendHandle:
        owner = self
        inner = self._ops.open_append(path)

        class _Killing:
            def append(self, data: bytes) -> None:
                owner._step()
                inner.append(data)

            def sync(self) -> None:
                owner._step()
                inner.sync()

            def close(self) -> None:
                inner.close()

        return _Killing()


def needs_repair(golden: WorkflowGoldenRun, sessions: Path, out_dir: Path, scratch: Path | None = None) -> bool:
    """A cleanly paused session with a blank text block in a stored history (a new generation) and a
    truncated message file in another conversation, when there is one. False: nothing to break (no model
    answer was committed before the pause)."""

    paused_after_first_unit(golden, sessions, out_dir, scratch)
    session = file_store(sessions, strict=False).open(golden.target.session_id, check=False)  # broken on purpose
    try:
        candidates = [
            (key, conv, index)
            for key, conv in sorted(session.state.conversations.items())
            for index, message in enumerate(conv.messages)
            if message.get("role") == "assistant"
        ]
        if not candidates:
            return False
        key, conv, index = candidates[0]
        messages: list[dict[str, Any]] = copy.deepcopy(conv.messages)
        messages[index]["content"].append({"text": "  "})
        event = events.generation(
            key, messages, list(conv.units), strategy="chaos", actions=["a blank text block added on purpose"]
        )
        session.commit([event], path="chaos/break-history")
    finally:
        session.close()
    others = [p for p in file_store(sessions).message_files(golden.target.session_id, 0) if p.parts[-3] != key]
    if others:
        FileOps().write_file(others[0], others[0].read_bytes()[:11], sync=False)
    return True


def _repair_child(target: ChaosTarget, sessions: Path, kill_at: int) -> int:
    from strands_durable.operations import repair_session

    repair_session(file_store(sessions, fileops=KillingFileOps(kill_at)), target.session_id)
    return 0


def crash_during_repair(golden: WorkflowGoldenRun, workspace: Path, run: FaultRun, *, stride: int = 1) -> None:
    """Kill a repairing child before its op n = 1, 1+stride, ... until a repair completes without reaching n."""
    from strands_durable.operations import repair_session
    from strands_durable.runner.run import resume

    target = golden.target
    kill_at = 1
    while kill_at < MAX_OPS:
        reset_dir(workspace)
        sessions, out_dir = workspace / "sessions", workspace / "out"
        scratch = golden.seed_workspace(workspace / "workspace")
        if not needs_repair(golden, sessions, out_dir, scratch):
            run.outcomes["no committed answer to break before the pause"] += 1
            return
        wait_for_threads()
        ended = run_in_child(lambda sessions=sessions, kill_at=kill_at: _repair_child(target, sessions, kill_at))
        if ended == ChildExit(0, None):
            break
        point, variant = f"repair-op[{kill_at}]", "SIGKILL"
        run.explore_at(point)
        kill_at += stride
        if ended != ChildExit(None, signal.SIGKILL):
            run.add(point, variant, "repair", f"the repairing child ended with {ended.describe()}")
            continue
        run.states.add(journal_digest(file_store(sessions).journal_bytes(target.session_id)))
        try:
            repair_session(file_store(sessions), target.session_id)
            options = run_options(target, out_dir, CrashPoints(), scratch_dir=scratch)
            resume(target.session_id, options, store=file_store(sessions))
            wait_for_threads()
        except DurableError as exc:
            run.add(point, variant, "repair", f"after a death during repair, repair and resume fail: {exc}")
            continue
        run.outcomes["repaired and resumed after a death during repair"] += 1
        run.judged(point, variant, judge.completed_on_disk(golden, sessions, golden.target.session_id, scratch))


def explore_compound(
    target: ChaosTarget,
    workdir: Path,
    *,
    first_points: int = 4,
    resume_points: tuple[int, ...] = (1, 5, 20),
    repair_stride: int = 1,
    golden: WorkflowGoldenRun | None = None,
    run: FaultRun | None = None,
) -> FaultRun:
    """Deaths during resume (first_points x resume_points schedules) and during repair (every op)."""
    run = run or FaultRun(FAULT, target.name)
    golden = (golden or run_golden(target, workdir / "golden")).require_completed()
    ids = list(dict.fromkeys(golden.point_ids))
    firsts = [ids[int((i + 1) * len(ids) / (first_points + 1))] for i in range(first_points)]
    for first in firsts:
        for nth in resume_points:
            crash_during_resume(golden, first, nth, workdir / "compound", run)
    crash_during_repair(golden, workdir / "compound", run, stride=repair_stride)
    return run


FAULT_CLASS = FaultClass(
    FAULT,
    {
        "gate": {"first_points": 2, "resume_points": (3, 15), "repair_stride": 4},
        "full": {"first_points": 6, "resume_points": (1, 5, 20, 60), "repair_stride": 1},
    },
    explore_compound,
)
