"""Simulated power loss: rebuild the session directory as a disk may hold it after a power cut, and resume.

The golden run goes through `RecordingFileOps`; `DiskModel` (faults/classes/disk_model.py) replays its log and keeps two
views of the disk: what the process sees, and what is durable (the conservative semantics of ALICE and
CrashMonkey).

At each persistence point (just before each fsync, fdatasync, directory fsync or sync, and at the end) a
bounded, deterministic set of crash states is built from the durable view plus chosen pending operations:
`lost` (none of them), `all` (every one, what a killed process leaves), `torn` (in order up to the last data
write, which lands half), `torn-middle` (the same, but a long append lands whole except one middle sector: a
complete line whose checksum fails), `prefix` (the first half, in order) and `reorder-j` (all but operation j). Each
distinct state is written to the workspace and resumed in fresh objects on a rebooted machine (`after_power_cut`:
a new boot id, so nothing the run wrote without fsync is trusted for having been written on this boot); it must
reach the golden result or fail with a clear DurableError, and no commit that returned durable to its caller may
be missing (`data-lost`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import Commit, CrashPoints, Durable, ToolCall
from strands_durable.errors import DurableError, SessionCompleted, SessionNotFound, exit_code_for
from strands_durable.faults.classes.disk_model import (
    CrashState,
    DiskModel,
    crash_states,
    materialize,
    persistence_points,
)
from strands_durable.faults.classes.recording import Op, RecordingFileOps
from strands_durable.faults.kit import judge
from strands_durable.faults.kit.findings import FaultClass, FaultRun
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.observe import run_options
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.stores import FileStore, file_store
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.store.base import read_journal_bytes
from strands_durable.store.fileops import FileOps
from strands_durable.store.wrapping import WrappingStore

FAULT = "power"
DEFAULT_MAX_POINTS = 400  # persistence points explored per workflow (evenly sampled beyond this)


class _Rebooted(FileOps):
    """The real file operations on the machine as it comes back from the power cut: a boot of its own."""

    def __init__(self) -> None:
        self._boot = f"after-a-power-cut-{secrets.token_hex(8)}"

    def boot_id(self) -> str:
        return self._boot


def after_power_cut(sessions: Path) -> FileStore:
    """The store a process opens after the power came back (every read and resume of a crash state goes here)."""
    return file_store(sessions, fileops=_Rebooted())


# -- promises: which commits had returned durable to their caller -------------------------------------------------


def promise_store(sessions: Path, ops: RecordingFileOps) -> WrappingStore:
    """A real local store (`kit/stores.py: file_store`) on the recording file layer, behind the wrapper store,
    which marks in the recording the moment a session's creation returned (its commits are marked by
    `mark_promises`)."""

    def created(session: Any, is_new: bool) -> None:
        if is_new:
            ops.mark(("promise", 0, ()))

    return WrappingStore(file_store(sessions, fileops=ops), on_open=created)


def mark_promises(bus: CrashPoints, ops: RecordingFileOps) -> None:
    """Mark, in the recording, each commit that returned durable: its seq and the tool results it holds. A
    deferred commit (`store.after_commit` with `durable=False`) is promised when a barrier that covers it returns
    (the `Durable` event), not when the commit returns."""

    def promise(point: Commit) -> None:
        if point.site == "store.after_commit" and (point.durable or point.synced):
            ops.mark(("promise", point.seq, point.tool_results))

    def covered(event: Durable) -> None:
        ops.mark(("promise", event.seq, event.tool_results))

    bus.subscribe(Commit, promise)
    bus.subscribe(Durable, covered)


# -- exploring --------------------------------------------------------------------------------------------------------


@dataclass
class PowerRecording:
    """The golden run under the recorder: its log, final journal and the directory it ran in (sessions/, out/ and
    workspace/, the tools' workspace, below it)."""

    golden: WorkflowGoldenRun
    log: list[Op]
    journal: bytes
    base: Path
    spec_snapshot: bytes  # the session's spec_snapshot.yaml as the run left it (the base is rewritten per state)

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
    base = workdir / "golden"
    snapshot = file_store(base / "sessions").spec_snapshot_bytes(target.session_id)
    return PowerRecording(golden, list(ops.log), golden.journal, base, snapshot)


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
        run.explore_at(state.point)
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
    store = after_power_cut(base / "sessions")  # every process of this state runs on the same new boot
    session_id = golden.target.session_id
    try:
        before = store.load(session_id)
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
    problems = _check_promises(recording, state, store, before.seq)
    if problems:
        return problems
    tools_run: list[ToolCall] = []
    bus = CrashPoints()
    bus.subscribe(ToolCall, lambda p: tools_run.append(p) if p.site == "tool.before" else None)
    try:
        options = run_options(golden.target, base / "out", bus, scratch_dir=recording.scratch)
        resume(session_id, options, store=store)
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
    final = store.load(session_id)
    # the tools' files are not compared: what a tool wrote without fsync may be lost with the power, by design
    return problems + judge.completed_like(golden, final)


def _check_promises(recording: PowerRecording, state: CrashState, store: FileStore, seq: int) -> list[tuple[str, str]]:
    """Every commit that had returned durable is in the recovered journal, byte for byte as written, and the
    session still has the spec snapshot it was created with."""
    if seq < state.promised_seq:
        return [
            (
                "data-lost",
                f"the journal recovered to commit {seq}, but commit {state.promised_seq} had returned durable",
            )
        ]
    session_id = recording.golden.target.session_id
    data = store.journal_path(session_id).read_bytes()
    valid = read_journal_bytes(data).valid_length
    if not recording.journal.startswith(data[:valid]):
        return [("data-lost", "the recovered journal is not a prefix of what the run wrote")]
    # a session whose journal survived must still have the spec it was created with (a resume whose spec file is
    # gone runs the snapshot)
    snapshot = recording.spec_snapshot
    try:
        recovered = store.spec_snapshot_bytes(session_id)
    except OSError:
        recovered = None
    if recovered != snapshot:
        what = (
            "is missing"
            if recovered is None
            else f"differs from the one written ({len(recovered)} of {len(snapshot)} bytes)"
        )
        return [("data-lost", f"the session's spec snapshot {what} after the power cut")]
    return []


FAULT_CLASS = FaultClass(
    FAULT, {"gate": {"max_points": 200}, "full": {"max_points": 5000}}, explore_power, records_own_golden=True
)
