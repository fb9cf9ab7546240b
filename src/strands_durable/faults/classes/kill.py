"""Process death (F3): SIGKILL, SIGINT and SIGTERM of a real child process, at every crash point and at random.

Children fork from this warm process (strands already imported), so a kill costs a fork, not an interpreter
start. At a crash point the child starts from the golden run's journal prefix (as the in-process explorer does:
just before the last commit that precedes the point, copied into a fresh session directory) and raises the
signal on itself the moment the point's emission reaches it (the kernel delivers SIGKILL at once, so the process
dies exactly there; the child first names the point in a scratch file). SIGINT and SIGTERM go through the same
two-stage handlers as `strands run`, so the run stops at its next safe point, is left `paused` and exits 130 or
143. At random moments the parent sends the signal while a child runs from the start with
`STRANDS_SYNTHETIC_LATENCY_MS`, timed from the moment the child's stop handlers are in (a byte on a pipe).

Every crashed session is then resumed in the parent, in fresh objects, and judged from what is on disk: the
stored histories were valid at the moment of death; the resume reaches a checkpoint whose durable state equals
the golden run's there (the convergence shortcut; with `full`, or when it never converges, it runs to the end
and the whole run must be identical to the golden run); the tool ledger (a file shared by every process) shows
no committed tool ran again.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoint
from strands_durable.errors import DurableError, ExitCode
from strands_durable.faults.kit import judge
from strands_durable.faults.kit.findings import FaultClass, FaultRun
from strands_durable.faults.kit.forking import (
    ChildExit,
    end_child,
    fork_child,
    reaped_on_error,
    run_in_child,
    wait_child,
)
from strands_durable.faults.kit.golden import GoldenPoint, WorkflowGoldenRun, cut_for, seed_session, skip_count
from strands_durable.faults.kit.ledger import ToolLedger
from strands_durable.faults.kit.observe import observed_store
from strands_durable.faults.kit.runs import (
    NOT_FIRED,
    Convergence,
    Trigger,
    crashing_run,
    journal_digest,
    resuming_run,
    run_golden,
    wait_for_threads,
)
from strands_durable.faults.kit.scratch import reset_dir
from strands_durable.faults.kit.snapshot import SnapshotDigest
from strands_durable.faults.kit.stores import mark_death, store_at
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.runner.signals import StopSignals
from strands_durable.store.base import read_journal_bytes
from strands_durable.store.state import fold
from strands_durable.store.wrapping import WrappingStore

FAULT = "kill"
SIGNALS = {"SIGKILL": signal.SIGKILL, "SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}
STOP_CODES = {signal.SIGINT: int(ExitCode.SIGINT), signal.SIGTERM: int(ExitCode.SIGTERM)}
DEFAULT_LATENCY_MS = 5
FIRED_REPORT = "fired.json"  # the crash point a child names just before it signals itself
READY_WITHIN_S = 120.0  # a child whose stop handlers are not in by then is stuck before its run (killed)


# -- exploring ----------------------------------------------------------------------------------------------------


@dataclass
class KillOutcome:
    """What happened at one crash point: where the crashing child started and died, where the resume stopped."""

    point: str
    start_index: int = 0  # the golden point the crashing child started before (0: from scratch)
    died_at: str | None = None  # the point the child named just before its signal, numbered as in the golden run
    crash_digest: str | None = None  # the snapshot digest of the stored session right after the death
    converged_at: str | None = None  # the checkpoint the resume stopped at (None: it ran to the end)


def explore_kill(
    target: ChaosTarget,
    workdir: Path,
    *,
    signals: tuple[str, ...] = ("SIGKILL", "SIGINT", "SIGTERM"),
    graceful_every: int = 1,
    max_points: int | None = None,
    random_moments: int = 0,
    latency_ms: int = DEFAULT_LATENCY_MS,
    seed: int = 0,
    golden: WorkflowGoldenRun | None = None,
    run: FaultRun | None = None,
    store_factory: Callable[[Path], Any] = store_at,
    resume_store: Callable[[Path], WrappingStore] = observed_store,
    full: bool = False,
    handlers: type[StopSignals] = StopSignals,
) -> FaultRun:
    """Kill a real child at every crash point of the golden run with each signal (SIGINT and SIGTERM at every
    `graceful_every`-th point), then at `random_moments` random times; resume each and judge it.
    `store_factory` builds the killed child's store, `resume_store` the resuming one and `handlers` the child's
    stop handlers (deliberately broken ones in the harness's tests); `full` runs every resume to the end instead
    of stopping at convergence."""
    run = run or FaultRun(FAULT, target.name)
    golden = (golden or run_golden(target, workdir / "golden")).require_completed()
    points = list(dict.fromkeys(golden.point_ids))
    if max_points is not None and len(points) > max_points:
        points = [points[int(i * len(points) / max_points)] for i in range(max_points)]
    for index, point_id in enumerate(points):
        for name in signals:
            if name != "SIGKILL" and index % max(1, graceful_every):
                continue
            kill_at_point(
                golden,
                point_id,
                name,
                workdir / "kill",
                run,
                store_factory,
                resume_store=resume_store,
                full=full,
                handlers=handlers,
            )
    if random_moments:
        rng = random.Random(seed)
        duration = _calibrate(golden.target, workdir / "kill", latency_ms)
        for number in range(random_moments):
            name = signals[number % len(signals)]
            delay = rng.uniform(0.0, duration)
            kill_at_random(golden, name, delay, workdir / "kill", run, latency_ms, handlers=handlers)
    return run


def kill_at_point(
    golden: WorkflowGoldenRun,
    point_id: str,
    signal_name: str,
    workspace: Path,
    run: FaultRun,
    store_factory: Callable[[Path], Any] = store_at,
    *,
    resume_store: Callable[[Path], WrappingStore] = observed_store,
    full: bool = False,
    handlers: type[StopSignals] = StopSignals,
) -> KillOutcome:
    """One child killed by `signal_name` at crash point `point_id`, then resumed and judged. The child starts
    from the golden journal prefix before the point (and the tools' workspace as the golden run had it there)."""
    signum = SIGNALS[signal_name]
    outcome = KillOutcome(point_id)
    cut = cut_for(golden, golden.point(point_id))
    child = functools.partial(_crash_child, golden, point_id, signum, workspace, store_factory, handlers=handlers)
    ended, ledger = child(cut)
    if ended.code == NOT_FIRED and cut is not None:
        # concurrent units interleave: the prefix may already hold the point's own commit (another unit's commit
        # came between its write and its after_commit point); such a point is reached from the start
        cut = None
        ended, ledger = child(cut)
    outcome.start_index = cut.index if cut is not None else 0
    run.outcomes["started-at-prefix" if cut is not None else "started-from-scratch"] += 1
    run.explore_at(point_id)
    if ended.code == NOT_FIRED:
        run.add(point_id, signal_name, "not-fired", "the child finished without reaching the crash point")
        return outcome
    run.outcomes[ended.describe()] += 1
    outcome.died_at = _named_point(workspace / FIRED_REPORT, golden, outcome.start_index)
    if ended not in _expected_exits(signum):
        run.add(point_id, signal_name, "unclean-stop", f"the child ended with {ended.describe()}")
        return outcome
    if outcome.died_at != point_id:
        run.add(point_id, signal_name, "wrong-point", f"the child signalled itself at {outcome.died_at}")
        return outcome
    converge_to = golden if not full and not judge.non_idempotent_tools(golden) else None
    _after_death(
        golden,
        point_id,
        signal_name,
        workspace,
        ledger,
        run,
        graceful=signum != signal.SIGKILL,
        converge_to=converge_to,
        resume_store=resume_store,
        outcome=outcome,
    )
    return outcome


def _crash_child(
    golden: WorkflowGoldenRun,
    point_id: str,
    signum: int,
    workspace: Path,
    store_factory: Callable[[Path], Any],
    cut: GoldenPoint | None,
    *,
    handlers: type[StopSignals] = StopSignals,
) -> tuple[ChildExit, ToolLedger]:
    """Fork the child that dies at `point_id`: from the golden journal prefix before `cut` (the ledger then
    starts with the prefix's tool points), or from scratch when there is no cut."""
    reset_dir(workspace)
    sessions, out_dir = workspace / "sessions", workspace / "out"
    scratch = golden.seed_workspace(workspace / "workspace", cut.index if cut is not None else 0)
    ledger = ToolLedger(workspace / "tools.log", durable=False)
    crash_at: str | Trigger = point_id
    if cut is not None:
        target = golden.point(point_id)
        header_end = golden.journal.index(b"\n") + 1
        seed_session(golden, store_at(sessions), out_dir, golden.journal[header_end : cut.journal_length])
        ledger.record_points(p.point for p in golden.points[: cut.index])
        crash_at = Trigger(target.point.site, target.point.path, skip_count(golden, target, cut.index))
    ended = run_in_child(
        lambda: crashing_run(
            golden.target,
            sessions,
            out_dir,
            ledger,
            crash_at,
            signum,
            store_factory,
            from_prefix=cut is not None,
            report=workspace / FIRED_REPORT,
            scratch=scratch,
            handlers=handlers,
        )
    )
    mark_death(sessions)
    return ended, ledger


def _named_point(report: Path, golden: WorkflowGoldenRun, start_index: int) -> str | None:
    """The point the child named, its occurrence counted as in the golden run (the child's run started at the
    golden point `start_index`, so emissions before that are not in its count)."""
    if not report.exists():
        return None
    site, path, occurrence = json.loads(report.read_bytes())
    earlier = golden.emissions_before(site, path, start_index)
    return CrashPoint(site, path, occurrence + earlier if start_index else occurrence).id


def kill_at_random(
    golden: WorkflowGoldenRun,
    signal_name: str,
    delay: float,
    workspace: Path,
    run: FaultRun,
    latency_ms: int,
    *,
    handlers: type[StopSignals] = StopSignals,
) -> None:
    """One child (with model latency, from scratch) signalled by the parent `delay` seconds after its stop
    handlers are in (`handlers`: the CLI's, or a deliberately broken subclass in the harness's tests). A child
    that ends before it gets there never started its run: the harness failed, not the product."""
    signum = SIGNALS[signal_name]
    reset_dir(workspace)
    sessions, out_dir, ledger = (
        workspace / "sessions",
        workspace / "out",
        ToolLedger(workspace / "tools.log", durable=False),
    )
    scratch = golden.seed_workspace(workspace / "workspace")
    point = f"random[{delay * 1000:.0f}ms]"
    run.explore_at(point)
    started = _fork_when_ready(
        lambda ready: crashing_run(
            golden.target, sessions, out_dir, ledger, None, signum, scratch=scratch, ready_pipe=ready, handlers=handlers
        ),
        env={"STRANDS_SYNTHETIC_LATENCY_MS": str(latency_ms)},
    )
    if isinstance(started, ChildExit):
        detail = f"the child ended with {started.describe()} before its run started (no signal was sent)"
        run.add(point, signal_name, "harness-error", detail)
        return
    with reaped_on_error(started):  # Ctrl+C: the child must not outlive the exploration (its scratch goes next)
        time.sleep(delay)
        with contextlib.suppress(ProcessLookupError):  # it has ended already (not reaped yet)
            os.kill(started, signum)
    ended = wait_child(started)
    mark_death(sessions)
    if ended not in _expected_exits(signum) | {ChildExit(0, None)}:
        run.add(point, signal_name, "unclean-stop", f"the child ended with {ended.describe()}")
        return
    if golden.target.session_id not in store_at(sessions).session_ids():
        run.outcomes["killed-before-the-session-existed"] += 1
        return
    _after_death(golden, point, signal_name, workspace, ledger, run, graceful=signum != signal.SIGKILL)


def _fork_when_ready(
    body: Callable[[int], int], *, env: dict[str, str], timeout: float = READY_WITHIN_S
) -> int | ChildExit:
    """Fork a child running `body(ready)`, where `ready` is a pipe's write end the child writes one byte to once its
    stop handlers are in (`crashing_run`); the child's pid once that byte came, else how it ended (one that is
    not ready within `timeout` is killed)."""
    read_end, write_end = os.pipe()
    try:
        pid = fork_child(lambda: body(write_end), env=env)
    finally:
        os.close(write_end)  # the parent's copy: the pipe reads as ended once the child's is closed too
    try:
        with reaped_on_error(pid):
            readable, _, _ = select.select([read_end], [], [], timeout)
            byte = os.read(read_end, 1) if readable else b""
    finally:
        os.close(read_end)
    if byte:
        return pid
    return end_child(pid) if not readable else wait_child(pid)


def _expected_exits(signum: int) -> set[ChildExit]:
    if signum == signal.SIGKILL:
        return {ChildExit(None, signal.SIGKILL)}
    # a graceful stop exits 130/143; a signal at the very end may find no safe point left and complete
    return {ChildExit(STOP_CODES[signum], None), ChildExit(0, None)}


def _after_death(
    golden: WorkflowGoldenRun,
    point: str,
    variant: str,
    workspace: Path,
    ledger: ToolLedger,
    run: FaultRun,
    *,
    graceful: bool,
    converge_to: WorkflowGoldenRun | None = None,
    resume_store: Callable[[Path], WrappingStore] = observed_store,
    outcome: KillOutcome | None = None,
) -> None:
    sessions, out_dir, scratch = workspace / "sessions", workspace / "out", workspace / "workspace"
    session_id = golden.target.session_id
    reader = store_at(sessions)
    try:
        crashed = reader.load(session_id)
    except DurableError as exc:
        run.add(point, variant, "resume-failed", f"the killed session does not load: {exc}")
        return
    run.states.add(journal_digest(reader.journal_bytes(session_id)))
    if outcome is not None:
        outcome.crash_digest = SnapshotDigest().digest(crashed)
    run.judged(point, variant, judge.stored_valid(crashed, "right after the kill"))
    if graceful and crashed.status not in ("paused", "completed"):
        run.add(point, variant, "status", f"a graceful stop left the session {crashed.status}, not paused")
    converged = None
    if crashed.status != "completed":
        try:  # the resume runs here, in fresh objects: only the death needs a real process
            converged = resuming_run(
                golden.target,
                sessions,
                out_dir,
                ledger,
                converge_to=converge_to,
                store_factory=resume_store,
                scratch=scratch,
            )
        except DurableError as exc:
            run.add(point, variant, "resume-failed", f"the resume failed: {exc}")
            return
        finally:
            wait_for_threads()
    run.outcomes["resumed"] += 1
    if converged is not None and converge_to is not None:
        run.outcomes["converged"] += 1
        if outcome is not None:
            outcome.converged_at = converged.point.id
        run.judged(point, variant, _judge_converged(converge_to, reader, session_id, converged, scratch))
    else:
        run.judged(point, variant, judge.completed_on_disk(golden, sessions, golden.target.session_id, scratch))
    run.judged(point, variant, ledger.reruns(golden))


def _judge_converged(
    golden: WorkflowGoldenRun, reader: Any, session_id: str, converged: Convergence, scratch: Path
) -> list[judge.Problem]:
    """Problems of a resume that stopped at convergence, read from the store: every stored history is valid, the
    journal up to the converged checkpoint folds to the golden state there (`judge.durable_at`), and the tools'
    workspace is the golden run's at that checkpoint."""
    try:
        records = read_journal_bytes(reader.journal_bytes(session_id)).records
    except DurableError as exc:
        return [("resume-failed", f"the session cannot be read after the resume: {exc}")]
    checkpoint = golden.checkpoint_states[converged.digest]
    return [
        *judge.stored_valid(fold(records), "after the resume"),
        *judge.durable_at(
            golden.digester,
            fold(records[: converged.seq + 1]),
            converged.digest,
            functools.partial(golden.snapshot_at, checkpoint),
        ),
        *judge.workspace_matches(golden.workspace.at(checkpoint.index + 1), scratch),
    ]


def _calibrate(target: ChaosTarget, workspace: Path, latency_ms: int) -> float:
    """Seconds one whole run takes in a child with the given model latency, from the moment its stop handlers are
    in (the range of random kill times)."""
    reset_dir(workspace)
    ledger = ToolLedger(workspace / "tools.log", durable=False)
    started = _fork_when_ready(
        lambda ready: crashing_run(
            target, workspace / "sessions", workspace / "out", ledger, None, signal.SIGKILL, ready_pipe=ready
        ),
        env={"STRANDS_SYNTHETIC_LATENCY_MS": str(latency_ms)},
    )
    if isinstance(started, ChildExit):
        raise RuntimeError(f"calibrating random kill times: the child ended with {started.describe()} before its run")
    ready_at = time.monotonic()
    ended = wait_child(started)
    if ended != ChildExit(0, None):
        raise RuntimeError(f"calibrating random kill times: the child's run ended with {ended.describe()}")
    return time.monotonic() - ready_at


FAULT_CLASS = FaultClass(
    FAULT,
    {
        "gate": {"max_points": 30, "graceful_every": 6, "random_moments": 3},
        "full": {"graceful_every": 1, "random_moments": 12},
    },
    explore_kill,
    seeded=True,
)
