"""Hostile files: a paused session's files damaged by hand, a bad disk or another program, beside a healthy session
(issue 39). The cases are `strands_durable.testing.hostile_files`: a journal replaced by random bytes, emptied,
deleted or made a directory, a record nested past the store's limit, a last record damaged after it was committed;
a `session.json` or message file nested past the limit.

Each case must do what it says and nothing more: `sessions list` goes on and shows the healthy session unchanged;
a damaged journal is listed as `corrupt (<file>: ...)`, its resume exits 17 naming the file and `delete` removes
it; a damaged readable file makes the resume exit 17 naming it, `repair` writes it again and the resume then
completes identical to the golden run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from strands_durable.crashpoints import CrashPoints
from strands_durable.errors import DurableError, ExitCode, exit_code_for
from strands_durable.faults.kit import judge
from strands_durable.faults.kit.findings import FaultClass, FaultRun
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.observe import run_options
from strands_durable.faults.kit.runs import paused_after_first_unit, run_golden
from strands_durable.faults.kit.scratch import reset_dir
from strands_durable.faults.kit.stores import FileStore, file_store
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.store import SessionSummary, events
from strands_durable.testing.hostile_files import CASES, HostileFile, case

FAULT = "hostile"
BYSTANDER = "bystander-session"


def explore_hostile(
    target: ChaosTarget,
    workdir: Path,
    *,
    cases: tuple[str, ...] | None = None,
    golden: WorkflowGoldenRun | None = None,
    run: FaultRun | None = None,
    store_factory: Callable[[Path], FileStore] = file_store,
) -> FaultRun:
    """Damage a paused session with each case (all of them when `cases` is None) and judge what follows;
    `store_factory` opens the sessions directory (a test hands in a broken store to see it caught)."""
    run = run or FaultRun(FAULT, target.name)
    golden = (golden or run_golden(target, workdir / "golden")).require_completed()
    for hostile in CASES if cases is None else tuple(case(name) for name in cases):
        damage_one(golden, hostile, workdir / FAULT, run, store_factory)
    return run


def damage_one(
    golden: WorkflowGoldenRun,
    hostile: HostileFile,
    workspace: Path,
    run: FaultRun,
    store_factory: Callable[[Path], FileStore] = file_store,
) -> None:
    from strands_durable.operations import repair_session
    from strands_durable.runner.run import resume

    reset_dir(workspace)
    sessions, out_dir = workspace / "sessions", workspace / "out"
    scratch = golden.seed_workspace(workspace / "workspace")
    paused_after_first_unit(golden, sessions, out_dir, scratch)
    session_id = golden.target.session_id
    store = store_factory(sessions)
    bystander = _bystander(store)
    point, variant = "paused", hostile.name
    run.explore_at(point)
    damaged = hostile.damage(store, session_id)
    try:
        rows = {summary.session_id: summary for summary in store.list()}
    except Exception as exc:  # any failure of the listing is what this class looks for
        run.add(point, variant, "listing-broken", f"`sessions list` failed: {type(exc).__name__}: {exc}")
        return
    if rows.get(BYSTANDER) != bystander:
        run.add(point, variant, "bystander-changed", f"the healthy session's row changed: {rows.get(BYSTANDER)}")
    victim = rows.get(session_id)
    listed_corrupt = victim is not None and victim.status == "corrupt" and hostile.reason in (victim.reason or "")
    if (hostile.outcome == "corrupt") != listed_corrupt:
        run.add(point, variant, "listed-wrong", f"listed as {victim.display_status if victim else 'nothing'}")
    options = run_options(golden.target, out_dir, CrashPoints(), scratch_dir=scratch)
    try:
        resume(session_id, options, store=store_factory(sessions))
        failure: BaseException | None = None
    except Exception as exc:
        failure = exc
    if not (
        isinstance(failure, DurableError)
        and exit_code_for(failure) == int(ExitCode.SESSION_UNUSABLE)
        and str(damaged) in str(failure)
    ):
        run.add(point, variant, "undetected-damage", f"expected exit 17 naming {damaged}, got {failure!r}")
        return
    run.outcomes["clean-failure: 17"] += 1
    if hostile.outcome == "corrupt":
        try:
            store.delete(session_id)
        except (DurableError, OSError) as exc:
            run.add(point, variant, "undeletable", f"`sessions delete` failed: {exc}")
        return
    try:
        repair_session(store_factory(sessions), session_id)
        resume(session_id, options, store=store_factory(sessions))
    except DurableError as exc:
        run.add(point, variant, "repair", f"after `sessions repair` the session still fails: {exc}")
        return
    run.outcomes["resumed"] += 1
    run.judged(point, variant, judge.completed_on_disk(golden, sessions, session_id, scratch))


def _bystander(store: FileStore) -> SessionSummary:
    """A healthy, closed session beside the damaged one; its row as listed before the damage."""
    meta = {"workflow_name": "bystander", "pattern": "chain", "created_at": "2026-01-01T00:00:00+00:00"}
    session = store.create(meta, b"", session_id=BYSTANDER)
    session.commit([events.status("paused", "interrupted")])
    session.close()
    return next(summary for summary in store.list() if summary.session_id == BYSTANDER)


FAULT_CLASS = FaultClass(
    FAULT,
    {
        "gate": {"cases": ("journal-deleted", "journal-damaged-last-record", "session-json-too-deep")},
        "full": {"cases": None},
    },
    explore_hostile,
)
