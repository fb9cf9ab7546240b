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
