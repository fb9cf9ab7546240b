"""Under pytest-xdist the controller only configures the suite and adds up the workers' reports: it never imports
strands-agents (importing it there delayed starting the workers); workers deal the long items first."""

from __future__ import annotations

import pytest

from tests.plugin.support import add_research_spec

CONTROLLER_PROBE = """
import sys

import pytest

_written = []


@pytest.hookimpl(tryfirst=True)
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


def test_the_pin_setting_runs_with_a_deprecation_warning_and_an_unknown_one_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    """`--strands-chaos-pin-workers` no longer pins anything (docs/chaos-plugin.md): a command line or ini file
    naming it still runs, with one PytestDeprecationWarning saying it has no effect and goes in 0.2; a run that
    does not name it has no such warning."""
    add_research_spec(pytester)
    options = [
        "--strands-chaos",
        "--strands-chaos-max-points=1",
        "--strands-chaos-schedules=0",
        "-p",
        "no:cacheprovider",
    ]
    notice = "*PytestDeprecationWarning: --strands-chaos-pin-workers*has no effect and will be removed in*0.2*"
    for pin in ("auto", "off"):
        result = pytester.runpytest(*options, f"--strands-chaos-pin-workers={pin}")
        result.assert_outcomes(passed=2, warnings=1)
        result.stdout.fnmatch_lines([notice])
    pytester.makeini("[pytest]\nstrands_chaos_pin_workers = off\n")
    result = pytester.runpytest(*options)
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines([notice])
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest(*options, "-W", "error::DeprecationWarning")
    result.assert_outcomes(passed=2)
    assert "pin-workers" not in result.stdout.str()
    result = pytester.runpytest("--strands-chaos", "--strands-chaos-pin-workers=always", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--strands-chaos-pin-workers: 'always' is not one of auto, off*"])
