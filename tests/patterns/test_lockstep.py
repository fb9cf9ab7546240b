"""Lockstep (chaos runs): concurrent units run in their own threads but take turns in an order fixed by where each
stands, so every run interleaves them alike; a crash in one leaves the others exactly where they stood."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from strands_durable import CrashPoints, InjectedCrash, LocalStore, RunOptions, resume, run_workflow
from strands_durable.crashpoints import CrashPoint
from strands_durable.faults.kit.oracle import comparable, first_difference
from tests.conftest import EXAMPLES

PINNED = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
CONCURRENT = [
    EXAMPLES / "parallel-market-scan.strands.yaml",
    EXAMPLES / "workflow-release-plan.strands.yaml",
    EXAMPLES / "orchestrator-workers-survey.strands.yaml",
]


def run(
    spec: Path, root: Path, *, lockstep: bool, crash_at: str | None = None, priority: tuple[str, ...] = ()
) -> tuple[list[str], LocalStore, str]:
    """The crash-point ids of one run in the order they were emitted, its store and session id (`priority`: the
    lockstep's unit order)."""
    seen: list[str] = []
    bus = CrashPoints()

    def record(point: CrashPoint) -> None:
        seen.append(point.id)
        if point.id == crash_at:
            raise InjectedCrash(point)

    bus.subscribe(record)
    store = LocalStore(root / "sessions", strict=True)
    options = RunOptions(
        provider="synthetic",
        out_dir=root / "out",
        hitl_use_defaults=True,
        crash_points=bus,
        lockstep=lockstep,
        lockstep_priority=priority,
        created_at=PINNED,  # clock-reading tools answer alike in every run
    )
    try:
        outcome = run_workflow(spec, options, store=store)
        session_id = outcome.session_id
    except InjectedCrash:
        (session_id,) = store.session_ids()
    return seen, store, session_id


@pytest.mark.parametrize("spec", CONCURRENT, ids=lambda p: p.name)
def test_every_lockstep_run_interleaves_the_units_alike(spec: Path, tmp_path: Path) -> None:
    first, store, session_id = run(spec, tmp_path / "a", lockstep=True)
    runs = [run(spec, tmp_path / f"r{i}", lockstep=True)[0] for i in range(3)]
    assert all(again == first for again in runs)
    free, free_store, free_id = run(spec, tmp_path / "free", lockstep=False)
    assert sorted(free) == sorted(first)  # the same crash points, in an order of their own
    expected = comparable(free_store.load(free_id))
    assert first_difference(expected, comparable(store.load(session_id))) is None


def test_units_take_turns_so_several_are_in_flight(tmp_path: Path) -> None:
    emitted, _, _ = run(CONCURRENT[0], tmp_path, lockstep=True)
    branches = [point.split("/")[0] for point in emitted if point.startswith("branch:")]
    first_done = emitted.index("branch:competitors/step[0]:researcher/unit.after")
    started = {branch for branch in branches[: first_done + 1]}
    assert started == {"branch:competitors", "branch:pricing", "branch:trends"}  # all in flight before one unit ends


def test_a_crash_leaves_the_other_units_where_they_stood(tmp_path: Path) -> None:
    spec = CONCURRENT[0]
    golden, golden_store, golden_id = run(spec, tmp_path / "golden", lockstep=True)
    target = "branch:pricing/step[0]:researcher/turn[0]/tool[0]:calculator/tool.executed"
    assert target in golden
    emitted, _, session_id = run(spec, tmp_path / "crash", lockstep=True, crash_at=target)
    assert emitted == golden[: golden.index(target) + 1]  # nothing moved on after the crash
    stopped = LocalStore(tmp_path / "crash" / "sessions")
    outcome = resume(session_id, RunOptions(provider="synthetic", hitl_use_defaults=True, lockstep=True), store=stopped)
    assert outcome.status == "completed"
    assert first_difference(comparable(golden_store.load(golden_id)), comparable(stopped.load(session_id))) is None


def test_under_a_unit_order_a_resumed_job_keeps_its_rank_whichever_unit_it_starts_with(tmp_path: Path) -> None:
    # the chaos kit's unit orders name each job by a unit of its own; a resumed branch that starts with its third
    # step still goes first, so the resume commits what the uninterrupted run committed after the crash, in the
    # same order (it was once ranked by that later step, which no priority names, and went last)
    spec = CONCURRENT[0]
    order = ("branch:competitors/step[0]", "branch:trends/step[0]", "branch:pricing/step[0]")

    def commits(points: list[str]) -> list[str]:
        return [point for point in points if point.endswith("store.after_commit")]

    golden, _, _ = run(spec, tmp_path / "golden", lockstep=True, priority=order)
    target = "branch:competitors/step[2]:analyst/turn[0]/model.before"
    assert target in golden
    assert golden.index("branch:trends/step[0]:analyst/turn[0]/model.before") > golden.index(target)
    emitted, _, session_id = run(spec, tmp_path / "crash", lockstep=True, priority=order, crash_at=target)
    assert emitted == golden[: golden.index(target) + 1]
    resumed: list[str] = []
    bus = CrashPoints()
    bus.subscribe(lambda point: resumed.append(point.id))
    options = RunOptions(
        provider="synthetic", hitl_use_defaults=True, crash_points=bus, lockstep=True, lockstep_priority=order,
        out_dir=tmp_path / "crash" / "out", created_at=PINNED,
    )  # fmt: skip
    outcome = resume(session_id, options, store=LocalStore(tmp_path / "crash" / "sessions"))
    assert outcome.status == "completed"
    assert commits(resumed) == commits(golden[golden.index(target) :])
