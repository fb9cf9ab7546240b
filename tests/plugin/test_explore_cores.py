"""A crash point's runs, and the threads they start, run on one core; the explorer's thread gets its mask back."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from strands_durable.faults.classes.explore import explore_point
from strands_durable.faults.kit.cores import allow_narrowing, current_core, one_core
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from tests.plugin.support import RESEARCH

# CI and the development VM have two cores; on one core there is nothing to narrow, and that is checked instead
ONE_CORE_ONLY = len(os.sched_getaffinity(0)) < 2


def _mask_of_a_new_thread() -> set[int]:
    seen: list[set[int]] = []
    thread = threading.Thread(target=lambda: seen.append(os.sched_getaffinity(0)))
    thread.start()
    thread.join()
    return seen[0]


def test_one_core_narrows_the_thread_and_its_new_threads_and_gives_the_mask_back() -> None:
    before = os.sched_getaffinity(0)
    with one_core() as core:
        if ONE_CORE_ONLY:
            assert core is None and os.sched_getaffinity(0) == before
            return
        assert core in before
        assert os.sched_getaffinity(0) == {core}
        assert _mask_of_a_new_thread() == {core}
    assert os.sched_getaffinity(0) == before
    assert _mask_of_a_new_thread() == before


def test_one_core_gives_the_mask_back_when_the_block_raises() -> None:
    before = os.sched_getaffinity(0)
    with pytest.raises(RuntimeError), one_core():
        raise RuntimeError("a point's run failed")
    assert os.sched_getaffinity(0) == before


def test_one_core_leaves_a_thread_already_on_one_core_alone() -> None:
    before = os.sched_getaffinity(0)
    core = min(before)
    os.sched_setaffinity(0, {core})
    try:
        with one_core() as narrowed:
            assert narrowed is None
            assert os.sched_getaffinity(0) == {core}
    finally:
        os.sched_setaffinity(0, before)


def test_current_core_is_one_this_thread_may_run_on() -> None:
    assert current_core() in os.sched_getaffinity(0)


def test_a_crash_points_runs_run_on_one_core(tmp_path: Path) -> None:
    golden = run_golden(ChaosTarget(RESEARCH), tmp_path / "golden")
    before = os.sched_getaffinity(0)
    outcome = explore_point(golden, golden.points[len(golden.points) // 2].id, tmp_path / "point")
    assert outcome.ok, outcome.describe()
    assert outcome.core is None if ONE_CORE_ONLY else outcome.core in before
    assert os.sched_getaffinity(0) == before


def test_one_core_also_narrows_threads_started_before_and_gives_them_their_mask_back() -> None:
    """The SDK's tool pool keeps its thread between runs: it must share the point's core, then get its mask back."""
    before = os.sched_getaffinity(0)
    ready, release = threading.Event(), threading.Event()
    seen: list[set[int]] = []

    def pool_thread() -> None:
        ready.set()
        release.wait()
        seen.append(os.sched_getaffinity(0))
        release.clear()
        release.wait()
        seen.append(os.sched_getaffinity(0))

    thread = threading.Thread(target=pool_thread)
    thread.start()
    ready.wait()
    with one_core() as core:
        release.set()
        while release.is_set():
            pass
    release.set()
    thread.join()
    assert seen == [before if ONE_CORE_ONLY else {core}, before]


def test_narrowing_turned_off_leaves_every_thread_to_the_kernel() -> None:
    before = os.sched_getaffinity(0)
    allow_narrowing(False)
    try:
        with one_core() as core:
            assert core is None
            assert os.sched_getaffinity(0) == before
    finally:
        allow_narrowing(True)
