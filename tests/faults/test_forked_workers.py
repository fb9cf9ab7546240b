"""The kit's forked workers (faults/kit/workers.py): forked from a warm process with no other thread alive, tasks
dealt one at a time to whichever worker is free, results back as records; a task that raised or whose worker died
is reported lost, and the other tasks still finish."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from strands_durable.faults.classes.explore import explore_point, iter_points
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.faults.kit.workers import ForkedWorkers, TaskLost, fork_problem

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_points_explored_in_workers_forked_after_a_golden_run_equal_the_serial_ones(tmp_path: Path) -> None:
    golden = run_golden(ChaosTarget(EXAMPLES / "chain-research.strands.yaml"), tmp_path / "golden")
    ids = list(iter_points(golden, 24, 0))
    serial = {pid: explore_point(golden, pid, tmp_path / "serial") for pid in ids}

    def explore(number: int) -> tuple[bool, list[str], list[str], str | None, int]:
        outcome = explore_point(golden, ids[number], tmp_path / f"w{os.getpid()}")
        return outcome.ok, outcome.fired, [str(p) for p in outcome.problems], outcome.converged_at, os.getpid()

    with ForkedWorkers(explore, count=2) as workers:
        workers.start(range(len(ids)))
        results = [workers.result(n) for n in range(len(ids))]
        assert workers.threads_at_fork == [[], []]  # a warm parent (strands, a golden run), and no thread but ours
    for pid, (ok, fired, problems, converged_at, _) in zip(ids, results, strict=True):
        expected = serial[pid]
        assert (ok, fired, problems, converged_at) == (
            expected.ok,
            expected.fired,
            [str(p) for p in expected.problems],
            expected.converged_at,
        ), pid
    assert len({r[4] for r in results}) == 2 and os.getpid() not in {r[4] for r in results}


def test_a_worker_that_is_free_takes_the_next_task() -> None:
    def task(number: int) -> int:
        time.sleep(1.0 if number == 0 else 0.01)
        return os.getpid()

    with ForkedWorkers(task, count=2) as workers:
        workers.start(range(12))
        pids = [workers.result(n) for n in range(12)]
    slow = pids[0]
    assert pids.count(slow) == 1  # while one worker ran the long task, the other took every other one


def test_a_task_that_raises_or_kills_its_worker_is_lost_and_the_rest_finish() -> None:
    def task(number: int) -> int:
        if number == 3:
            raise ValueError("task three is broken")
        if number == 5:
            os._exit(9)  # the worker dies in the middle of a task
        return number * 10

    with ForkedWorkers(task, count=2) as workers:
        workers.start(range(10))
        with pytest.raises(TaskLost, match="ValueError: task three is broken"):
            workers.result(3)
        with pytest.raises(TaskLost, match="ended before answering"):
            workers.result(5)
        assert [workers.result(n) for n in range(10) if n not in (3, 5)] == [
            n * 10 for n in range(10) if n not in (3, 5)
        ]


def test_workers_are_not_forked_while_another_thread_runs() -> None:
    stop = threading.Event()
    lingering = threading.Thread(target=stop.wait, name="lingering-thread")
    lingering.start()
    try:
        workers = ForkedWorkers(lambda n: n, count=1)
        with pytest.raises(RuntimeError, match="lingering-thread"):
            workers.start([0])
        assert workers.threads_at_fork == []
    finally:
        stop.set()
        lingering.join()


def test_only_linux_forks_workers() -> None:
    assert fork_problem("linux") is None
    assert fork_problem("darwin") == "forked workers need Linux (this platform: darwin)"
