"""Under pytest-xdist the controller only configures the suite and adds up the workers' reports: it never imports
strands-agents (importing it there delayed starting the workers); each worker runs on a core of its own."""

from __future__ import annotations

import os

import pytest

from strands_durable.faults.kit.cores import worker_core
from tests.plugin.support import add_research_spec

CONTROLLER_PROBE = """
import sys

import pytest

_written = []


@pytest.hookimpl(tryfirst=True)  # before the plugin's own imports for its end (pytest_strands/exit.py)
def pytest_testnodedown(node, error):
    if not _written:
        _written.append(True)
        root = node.config.rootpath
        loaded = sorted(m for m in sys.modules if m == "strands" or m.startswith("strands."))
        (root / "controller-modules.txt").write_text(repr(loaded))
        ours = sorted(m for m in sys.modules if m.startswith("strands_durable."))
        (root / "controller-ours.txt").write_text(repr(ours))
"""


@pytest.mark.slow
def test_the_xdist_controller_imports_neither_strands_agents_nor_the_runs_machinery(pytester: pytest.Pytester) -> None:
    """Checked when the first worker is down: until then the controller only starts workers and adds up reports."""
    add_research_spec(pytester)
    pytester.makeconftest(CONTROLLER_PROBE)
    result = pytester.runpytest_subprocess(
        "--strands-chaos",
        "--strands-chaos-max-points=2",
        "--strands-chaos-schedules=0",
        "-p",
        "no:cacheprovider",
        "-n",
        "2",
    )
    result.assert_outcomes(passed=3)
    assert (pytester.path / "controller-modules.txt").read_text() == "[]"
    # nor the runs' machinery (the store alone took ~30 ms, the fault registry ~30 ms, before the workers started)
    ours = eval((pytester.path / "controller-ours.txt").read_text())
    heavy = ("store", "runner", "agent", "history", "faults.classes", "faults.kit.golden", "faults.kit.oracle")
    assert [m for m in ours if m.removeprefix("strands_durable.").startswith(heavy)] == []


ORDER_PROBE = """
def pytest_collection_finish(session):
    worker = getattr(session.config, "workerinput", {}).get("workerid", "serial")
    (session.config.rootpath / f"order-{worker}.txt").write_text("\\n".join(i.name for i in session.items))
"""


@pytest.mark.slow
def test_xdist_workers_deal_each_workflows_schedules_before_its_crash_points(pytester: pytest.Pytester) -> None:
    """The long `schedules` item of the last workflow no longer runs alone on one worker after the other finished:
    workers order it first; a serial run keeps the collection order (golden, points, schedules)."""
    add_research_spec(pytester)
    pytester.makeconftest(ORDER_PROBE)
    options = [
        "--strands-chaos",
        "--strands-chaos-max-points=2",
        "--strands-chaos-schedules=1",
        "-p",
        "no:cacheprovider",
    ]
    pytester.runpytest_subprocess(*options, "-n", "2").assert_outcomes(passed=4)
    for worker in ("gw0", "gw1"):
        order = (pytester.path / f"order-{worker}.txt").read_text().splitlines()
        assert order[0] == "schedules" and order[1] == "golden" and len(order) == 4
    pytester.runpytest_subprocess(*options, "-n", "0").assert_outcomes(passed=4)
    order = (pytester.path / "order-serial.txt").read_text().splitlines()
    assert order[0] == "golden" and order[-1] == "schedules"


AFFINITY_PROBE = """
import os


def _cores(thread_id):
    try:
        return tuple(sorted(os.sched_getaffinity(thread_id)))
    except ProcessLookupError:  # the thread ended between the listing and this call (a store's idle syncer)
        return None


def pytest_sessionfinish(session):
    worker = getattr(session.config, "workerinput", {}).get("workerid", "serial")
    threads = sorted({c for t in os.listdir("/proc/self/task") if (c := _cores(int(t))) is not None})
    (session.config.rootpath / f"cores-{worker}.txt").write_text(repr(threads))
"""


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this system")
def test_xdist_workers_run_all_their_threads_on_a_core_of_their_own(pytester: pytest.Pytester) -> None:
    """Each worker's threads (the runs' units, tools and store threads, execnet's) stay on one core, a different
    one per worker, when there are no more workers than cores; `off` leaves them where the kernel puts them."""
    add_research_spec(pytester)
    pytester.makeconftest(AFFINITY_PROBE)
    options = [
        "--strands-chaos",
        "--strands-chaos-max-points=4",
        "--strands-chaos-schedules=0",
        "-p",
        "no:cacheprovider",
    ]
    cores = sorted(os.sched_getaffinity(0))
    pytester.runpytest_subprocess(*options, "-n", "2").assert_outcomes(passed=5)
    seen = [eval((pytester.path / f"cores-gw{n}.txt").read_text()) for n in (0, 1)]
    if len(cores) >= 2:
        assert seen == [[(cores[0],)], [(cores[1],)]]
    else:  # more workers than cores: nothing pinned
        assert seen == [[tuple(cores)], [tuple(cores)]]
    pytester.runpytest_subprocess(*options, "-n", "2", "--strands-chaos-pin-workers=off").assert_outcomes(passed=5)
    assert all(eval((pytester.path / f"cores-gw{n}.txt").read_text()) == [tuple(cores)] for n in (0, 1))
    pytester.runpytest_subprocess(*options, "-n", "0").assert_outcomes(passed=5)  # a serial run is never pinned
    assert eval((pytester.path / "cores-serial.txt").read_text()) == [tuple(cores)]


def test_a_worker_gets_the_core_of_its_number_only_when_every_worker_has_one() -> None:
    assert worker_core("gw0", 2, [3, 1]) == 1 and worker_core("gw1", 2, [3, 1]) == 3
    assert worker_core("gw2", 4, [0, 1, 2, 3]) == 2
    assert worker_core("gw0", 3, [0, 1]) is None  # more workers than cores: the kernel spreads them
    assert worker_core("master", 1, [0, 1]) is None


def test_an_unknown_pin_setting_is_a_usage_error(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester)
    result = pytester.runpytest("--strands-chaos", "--strands-chaos-pin-workers=always", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--strands-chaos-pin-workers: 'always' is not one of auto, off*"])
