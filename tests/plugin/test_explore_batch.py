"""A crash point's runs, and the threads they start, run under SCHED_BATCH (faults/kit/cores.py `batch_scheduled`);
every thread gets its own policy back afterwards, and nothing outside the explorer is touched."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from strands_durable.faults.classes.explore import explore_point
from strands_durable.faults.kit.cores import allow_narrowing, batch_scheduled
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from tests.plugin.support import RESEARCH

pytestmark = pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="no scheduling policies on this system")


def _in_a_new_thread(probe: Callable[[], int]) -> int:
    seen: list[int] = []
    thread = threading.Thread(target=lambda: seen.append(probe()))
    thread.start()
    thread.join()
    return seen[0]


def _policy() -> int:
    return os.sched_getscheduler(0)


def test_the_thread_and_its_new_threads_run_batch_and_get_their_policy_back() -> None:
    assert _policy() == os.SCHED_OTHER
    with batch_scheduled() as batch:
        assert batch
        assert _policy() == os.SCHED_BATCH
        assert _in_a_new_thread(_policy) == os.SCHED_BATCH
    assert _policy() == os.SCHED_OTHER
    assert _in_a_new_thread(_policy) == os.SCHED_OTHER


def test_the_policy_comes_back_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError), batch_scheduled():
        raise RuntimeError("a point's run failed")
    assert _policy() == os.SCHED_OTHER


class _Parked:
    """A thread started before the block (like the SDK's tool thread) that reports its policy when asked."""

    def __init__(self, policy: int) -> None:
        self.ask, self.answered = threading.Event(), threading.Event()
        self.seen: list[int] = []
        self.stop = False
        self.thread = threading.Thread(target=self._run, args=(policy,))
        self.thread.start()
        self.answered.wait()
        self.answered.clear()

    def _run(self, policy: int) -> None:
        os.sched_setscheduler(0, policy, os.sched_param(0))
        self.answered.set()
        while True:
            self.ask.wait()
            self.ask.clear()
            if self.stop:
                return
            self.seen.append(_policy())
            self.answered.set()

    def policy(self) -> int:
        self.ask.set()
        self.answered.wait()
        self.answered.clear()
        return self.seen[-1]

    def end(self) -> None:
        self.stop = True
        self.ask.set()
        self.thread.join()


def test_threads_started_before_run_batch_too_and_get_their_own_policy_back() -> None:
    normal, batch_already = _Parked(os.SCHED_OTHER), _Parked(os.SCHED_BATCH)
    try:
        with batch_scheduled():
            assert normal.policy() == os.SCHED_BATCH
            assert batch_already.policy() == os.SCHED_BATCH
        assert normal.policy() == os.SCHED_OTHER
        assert batch_already.policy() == os.SCHED_BATCH  # its own choice, kept
    finally:
        normal.end()
        batch_already.end()


def test_a_thread_started_inside_and_still_alive_gets_the_callers_policy_back() -> None:
    with batch_scheduled():
        pool = _Parked(os.SCHED_BATCH)  # as a pool thread started by a point's run inherits it
    try:
        assert pool.policy() == os.SCHED_OTHER
    finally:
        pool.end()


def test_turned_off_it_changes_nothing() -> None:
    allow_narrowing(False)
    try:
        with batch_scheduled() as batch:
            assert not batch
            assert _policy() == os.SCHED_OTHER
    finally:
        allow_narrowing(True)


def test_a_crash_points_runs_run_batch_and_the_explorer_gets_its_policy_back(tmp_path: Path) -> None:
    golden = run_golden(ChaosTarget(RESEARCH), tmp_path / "golden")
    seen: set[int] = set()
    from strands_durable.faults.classes import explore

    original = explore._explore_schedule

    def spying(*args: object, **kwargs: object) -> explore.PointOutcome:
        seen.add(_policy())
        return original(*args, **kwargs)  # type: ignore[arg-type]

    explore._explore_schedule = spying  # type: ignore[assignment]
    try:
        outcome = explore_point(golden, golden.points[len(golden.points) // 2].id, tmp_path / "point")
    finally:
        explore._explore_schedule = original
    assert outcome.ok, outcome.describe()
    assert seen == {os.SCHED_BATCH}
    assert _policy() == os.SCHED_OTHER
