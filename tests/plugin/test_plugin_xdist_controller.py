"""Under pytest-xdist the controller only configures the suite and adds up the workers' reports: it never imports
strands-agents (importing it there delayed starting the workers)."""

from __future__ import annotations

import pytest

from tests.plugin.support import add_research_spec

CONTROLLER_PROBE = """
import sys


def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput"):
        loaded = sorted(m for m in sys.modules if m == "strands" or m.startswith("strands."))
        (session.config.rootpath / "controller-modules.txt").write_text(repr(loaded))
"""


@pytest.mark.slow
def test_the_xdist_controller_does_not_import_strands_agents(pytester: pytest.Pytester) -> None:
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
