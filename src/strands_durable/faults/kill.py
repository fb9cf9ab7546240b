"""Process death (F3): SIGKILL, SIGINT and SIGTERM of a real child process, at every crash point and at random.

Children fork from this warm process (strands already imported), so a kill costs a fork, not an interpreter
start. At a crash point the child itself raises the signal the moment the crash-point event reaches it (the
kernel delivers SIGKILL at once, so the process dies exactly there); SIGINT and SIGTERM go through the same
two-stage handlers as `strands run`, so the run stops at its next safe point, is left `paused` and exits 130 or
143. At random moments the parent sends the signal while the child runs with `STRANDS_SYNTHETIC_LATENCY_MS`.

Every crashed session is then resumed by another child and judged in the parent: the stored histories were
valid at the moment of death, the resume completes identical to the golden run, and the tool ledger (an fsynced
file shared by every process) shows no committed tool ran again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoint, CrashPoints
from strands_durable.errors import DurableError, ExitCode
from strands_durable.faults.common import (
    FaultRun,
    FaultTarget,
    Golden,
    ToolLedger,
    non_idempotent_tools,
    reset_dir,
    run_golden,
    run_options,
)
from strands_durable.faults.forking import ChildExit, fork_child, run_in_child, wait_child
from strands_durable.faults.oracle import stored_violations
from strands_durable.store import layout
from strands_durable.store.journal import JOURNAL_NAME, read_journal
from strands_durable.store.local import LocalStore

FAULT = "kill"
SIGNALS = {"SIGKILL": signal.SIGKILL, "SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}
STOP_CODES = {signal.SIGINT: int(ExitCode.SIGINT), signal.SIGTERM: int(ExitCode.SIGTERM)}
NOT_FIRED = 99  # the child finished without reaching its crash point
_NO_NOTICE = -1  # a descriptor that is never open: the handlers' notice is dropped (they ignore OSError)
DEFAULT_LATENCY_MS = 5


# -- the children -----------------------------------------------------------------------------------------------


def _crashing_run(
    target: FaultTarget,
    sessions: Path,
    out_dir: Path,
    ledger: ToolLedger,
    point_id: str | None,
    signum: int,
    store_factory: Callable[[Path], Any] = LocalStore,
) -> int:
    """A child's run from scratch that raises `signum` on itself at crash point `point_id` (None: never)."""
    from strands_durable.agent.durable import StopRequested
    from strands_durable.cli.signals import StopSignals
    from strands_durable.runner.api import run_workflow

    bus = CrashPoints()
    ledger.subscribe(bus)
    fired: list[CrashPoint] = []

    def at_point(point: CrashPoint) -> None:
        if not fired and point.id == point_id:
            fired.append(point)
            os.kill(os.getpid(), signum)

    bus.subscribe(at_point)
    stops = StopSignals(notice_fd=_NO_NOTICE)  # the CLI's handlers, without their notice on the terminal
    with stops:
        try:
            run_workflow(
                target.spec_path,
                run_options(target, out_dir, bus, stop_requested=stops.requested),
                store=store_factory(sessions),
                session_id=target.session_id,
            )
        except (StopRequested, KeyboardInterrupt):
            return stops.exit_code
    return 0 if fired or point_id is None else NOT_FIRED


def _resuming_run(target: FaultTarget, sessions: Path, out_dir: Path, ledger: ToolLedger) -> int:
    from strands_durable.runner.api import resume

    bus = CrashPoints()
    ledger.subscribe(bus)
    resume(target.session_id, run_options(target, out_dir, bus), store=LocalStore(sessions))
    return 0


# -- exploring ----------------------------------------------------------------------------------------------------


def explore_kill(
    target: FaultTarget,
    workdir: Path,
    *,
    signals: tuple[str, ...] = ("SIGKILL", "SIGINT", "SIGTERM"),
    graceful_every: int = 1,
    max_points: int | None = None,
    random_moments: int = 0,
    latency_ms: int = DEFAULT_LATENCY_MS,
    seed: int = 0,
    golden: Golden | None = None,
    run: FaultRun | None = None,
    store_factory: Callable[[Path], Any] = LocalStore,
) -> FaultRun:
    """Kill a real child at every crash point of the golden run with each signal (SIGINT and SIGTERM at every
    `graceful_every`-th point), then at `random_moments` random times; resume each and judge it.
    `store_factory` builds the killed child's store (a deliberately broken one in the harness's tests)."""
    run = run or FaultRun(FAULT, target.name)
    golden = golden or run_golden(target, workdir / "golden")
    points = list(dict.fromkeys(golden.point_ids))
    if max_points is not None and len(points) > max_points:
        points = [points[int(i * len(points) / max_points)] for i in range(max_points)]
    for index, point_id in enumerate(points):
        for name in signals:
            if name != "SIGKILL" and index % max(1, graceful_every):
                continue
            kill_at_point(golden, point_id, name, workdir / "kill", run, store_factory)
    if random_moments:
        rng = random.Random(seed)
        duration = _calibrate(golden.target, workdir / "kill", latency_ms)
        for number in range(random_moments):
            name = signals[number % len(signals)]
            kill_at_random(golden, name, rng.uniform(0.0, duration), workdir / "kill", run, latency_ms)
    return run


def kill_at_point(
    golden: Golden,
    point_id: str,
    signal_name: str,
    workspace: Path,
    run: FaultRun,
    store_factory: Callable[[Path], Any] = LocalStore,
) -> None:
    """One child killed by `signal_name` at crash point `point_id`, then resumed and judged."""
    signum = SIGNALS[signal_name]
    reset_dir(workspace)
    sessions, out_dir, ledger = (
        workspace / "sessions",
        workspace / "out",
        ToolLedger(workspace / "tools.log", durable=False),
    )
    ended = run_in_child(
        lambda: _crashing_run(golden.target, sessions, out_dir, ledger, point_id, signum, store_factory)
    )
    run.explored += 1
    if ended.code == NOT_FIRED:
        run.add(point_id, signal_name, "not-fired", "the child finished without reaching the crash point")
        return
    expected = _expected_exits(signum)
    if ended not in expected:
        run.add(point_id, signal_name, "unclean-stop", f"the child ended with {ended.describe()}")
        return
    _after_death(golden, point_id, signal_name, workspace, ledger, run, graceful=signum != signal.SIGKILL)


def kill_at_random(
    golden: Golden, signal_name: str, delay: float, workspace: Path, run: FaultRun, latency_ms: int
) -> None:
    """One child (with model latency) signalled by the parent `delay` seconds after it started."""
    signum = SIGNALS[signal_name]
    reset_dir(workspace)
    sessions, out_dir, ledger = (
        workspace / "sessions",
        workspace / "out",
        ToolLedger(workspace / "tools.log", durable=False),
    )
    env = {"STRANDS_SYNTHETIC_LATENCY_MS": str(latency_ms)}
    pid = fork_child(lambda: _crashing_run(golden.target, sessions, out_dir, ledger, None, signum), env=env)
    time.sleep(delay)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)
    ended = wait_child(pid)
    point = f"random[{delay * 1000:.0f}ms]"
    run.explored += 1
    if ended not in _expected_exits(signum) | {ChildExit(0, None)}:
        run.add(point, signal_name, "unclean-stop", f"the child ended with {ended.describe()}")
        return
    if not (layout.session_dir(sessions, golden.target.session_id) / JOURNAL_NAME).exists():
        run.outcomes["killed-before-the-session-existed"] += 1
        return
    _after_death(golden, point, signal_name, workspace, ledger, run, graceful=signum != signal.SIGKILL)


def _expected_exits(signum: int) -> set[ChildExit]:
    if signum == signal.SIGKILL:
        return {ChildExit(None, signal.SIGKILL)}
    # a graceful stop exits 130/143; a signal at the very end may find no safe point left and complete
    return {ChildExit(STOP_CODES[signum], None), ChildExit(0, None)}


def _after_death(
    golden: Golden, point: str, variant: str, workspace: Path, ledger: ToolLedger, run: FaultRun, *, graceful: bool
) -> None:
    sessions, out_dir = workspace / "sessions", workspace / "out"
    session_id = golden.target.session_id
    try:
        crashed = LocalStore(sessions).load(session_id)
    except DurableError as exc:
        run.add(point, variant, "resume-failed", f"the killed session does not load: {exc}")
        return
    run.states.add(journal_digest(layout.session_dir(sessions, session_id) / JOURNAL_NAME))
    for violation in stored_violations(crashed, mode="stored"):
        run.add(point, variant, "invalid-history", f"right after the kill: {violation}")
    if graceful and crashed.status not in ("paused", "completed"):
        run.add(point, variant, "status", f"a graceful stop left the session {crashed.status}, not paused")
    if crashed.status != "completed":
        try:  # the resume runs here, in fresh objects: only the death needs a real process
            _resuming_run(golden.target, sessions, out_dir, ledger)
        except DurableError as exc:
            run.add(point, variant, "resume-failed", f"the resume failed: {exc}")
            return
        wait_for_threads()
    run.outcomes["resumed"] += 1
    run.judge(golden, sessions, point, variant)
    for detail in ledger.reruns(non_idempotent_tools(golden)):
        run.add(point, variant, "tool-rerun", detail)


def wait_for_threads(timeout: float = 5.0) -> None:
    """Let the threads of an in-process run end before the next fork."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join(timeout)


def journal_digest(path: Path) -> str:
    """The digest of a journal's committed events (timestamps left out): one per distinct crash state."""
    contents = read_journal(path, path.read_bytes())
    events = [record.get("events") for record in contents.records]
    return hashlib.sha256(json.dumps(events, sort_keys=True, default=str).encode()).hexdigest()


def _calibrate(target: FaultTarget, workspace: Path, latency_ms: int) -> float:
    """Seconds one whole run takes in a child with the given model latency (the range of random kill times)."""
    reset_dir(workspace)
    ledger = ToolLedger(workspace / "tools.log", durable=False)
    started = time.monotonic()
    run_in_child(
        lambda: _crashing_run(target, workspace / "sessions", workspace / "out", ledger, None, signal.SIGKILL),
        env={"STRANDS_SYNTHETIC_LATENCY_MS": str(latency_ms)},
    )
    return time.monotonic() - started
