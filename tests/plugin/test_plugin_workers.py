"""`--strands-chaos-workers=N`: crash points run in workers forked after collection, and what pytest reports is the
serial run's: item outcomes, failure texts, `-k`, `-x`, `--lf`, the JUnit XML, the JSON and the HTML reports. With
pytest-xdist's `-n` other than 0, and on a platform without fork, the option is a usage error."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_strands.workers import parse_workers
from strands_durable.faults.suite import ChaosUsageError
from tests.conftest import EXAMPLES
from tests.plugin.support import MUTATIONS, add_research_spec, summary

BASE = ("--strands-chaos", "--strands-chaos-schedules=2", "-p", "no:randomly", "-n", "0")
_TIMES = re.compile(r'\s(time|timestamp|hostname)="[^"]*"')
# each session's own scratch directory: its owner (pid, start time, pid namespace) and tempfile's random part
_SCRATCH = re.compile(r"strands-chaos-\d+\.\d+\.\d+-[A-Za-z0-9_]{8}\b")


def _unscratched(text: str) -> str:
    return _SCRATCH.sub("strands-chaos-SCRATCH", text)


def _run(pytester: pytest.Pytester, tag: str, workers: int, *args: str) -> dict[str, object]:
    out = pytester.path / f"out-{tag}-{workers}"
    junit, report, html = out / "junit.xml", out / "chaos.json", out / "chaos.html"
    result = pytester.runpytest_subprocess(
        *BASE,
        f"--strands-chaos-workers={workers}",
        f"--junitxml={junit}",
        f"--strands-chaos-report={report}",
        f"--strands-chaos-html={html}",
        "-rA",
        *args,
    )
    cases = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        failure = case.find("failure")
        text = None if failure is None else _unscratched(failure.text or "")
        cases[f"{case.get('classname')}::{case.get('name')}"] = text
    return {
        "ret": result.ret,
        "cases": cases,
        "junit": _unscratched(_TIMES.sub("", junit.read_text())),
        "report": json.loads(_unscratched(report.read_text())),
        "html": _unscratched(html.read_text()),
        "summary": summary(result),
        "short": sorted(line for line in result.outlines if line.startswith(("PASSED ", "FAILED ", "ERROR "))),
    }


def _same(serial: dict[str, object], forked: dict[str, object]) -> None:
    for key in ("ret", "cases", "summary", "short", "report", "junit", "html"):
        assert forked[key] == serial[key], key


@pytest.mark.slow
def test_forked_workers_report_exactly_what_the_serial_run_reports(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester)
    pytester.makeconftest(MUTATIONS["store_forgets_last_commit"])  # some points fail, with readable texts
    serial = _run(pytester, "all", 0)
    forked = _run(pytester, "all", 2)
    failing = [name for name, text in serial["cases"].items() if text]  # type: ignore[union-attr]
    assert serial["ret"] == pytest.ExitCode.TESTS_FAILED and failing, "the mutation must make points fail"
    assert len(serial["cases"]) > 100  # type: ignore[arg-type]
    _same(serial, forked)

    selected = ("-k", "calculator and not before_commit")
    _same(_run(pytester, "k", 0, *selected), _run(pytester, "k", 2, *selected))
    first = _run(pytester, "x", 0, "-x")
    assert len(first["cases"]) < len(serial["cases"])  # type: ignore[arg-type]
    _same(first, _run(pytester, "x", 2, "-x"))


@pytest.mark.slow
def test_last_failed_reruns_the_same_items_with_forked_workers(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester)
    pytester.makeconftest(MUTATIONS["store_forgets_last_commit"])
    pytester.runpytest_subprocess(*BASE, "--strands-chaos-max-points=40", "-p", "no:randomly")  # fills the cache
    serial = _run(pytester, "lf", 0, "--strands-chaos-max-points=40", "--lf")
    forked = _run(pytester, "lf", 2, "--strands-chaos-max-points=40", "--lf")
    assert 0 < len(serial["cases"]) < 40  # type: ignore[arg-type]
    _same(serial, forked)


def test_workers_with_xdist_processes_are_a_usage_error(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester)
    result = pytester.runpytest_subprocess("--strands-chaos", "--strands-chaos-workers=2", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--strands-chaos-workers: cannot run under pytest-xdist's -n 2*pass -n 0 with it*"])


def test_workers_on_a_platform_without_fork_are_a_usage_error_naming_it() -> None:
    with pytest.raises(ChaosUsageError, match=r"--strands-chaos-workers: forked workers need Linux \(this platform: "):
        parse_workers("2", platform="darwin", numprocesses=None)
    with pytest.raises(ChaosUsageError, match="win32"):
        parse_workers("auto", platform="win32", numprocesses=0)


def test_workers_values() -> None:
    assert parse_workers(None, platform="linux", numprocesses=None) == 0
    assert parse_workers("0", platform="darwin", numprocesses=2) == 0  # off: nothing to refuse
    assert parse_workers("3", platform="linux", numprocesses="0") == 3
    assert parse_workers("auto", platform="linux", numprocesses=0) >= 1
    for bad in ("two", "-1"):
        with pytest.raises(ChaosUsageError, match="--strands-chaos-workers: "):
            parse_workers(bad, platform="linux", numprocesses=None)


def test_a_bad_workers_value_is_one_usage_line(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester)
    result = pytester.runpytest_subprocess("--strands-chaos", "--strands-chaos-workers=many", "-n", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--strands-chaos-workers: 'many' is not a number of workers or 'auto'*"])
    assert "Traceback" not in result.stderr.str()


def test_items_run_in_the_forked_workers_and_the_sample_once_before_the_fork(pytester: pytest.Pytester) -> None:
    """The workers, not the parent, explore the points: the parent's scratch holds no point directory of its own
    (a passing point never runs here), each worker's directories are its own. The workflow's exactness sample (the
    real segments its derived crash states are checked against) runs once, here, before the fork: no worker runs
    it again."""
    add_research_spec(pytester)
    scratch = pytester.path / "scratch"
    scratch.mkdir()
    pytester.makeconftest(
        "import shutil\n"
        "def pytest_sessionfinish(session):\n"
        "    from pytest_strands.items import SUITE\n"
        f"    shutil.copytree(session.config.stash[SUITE].workdir, {str(scratch / 'kept')!r}, symlinks=True)\n"
    )
    result = pytester.runpytest_subprocess(
        *BASE, "--strands-chaos-workers=2", "--strands-chaos-max-points=30", "--strands-chaos-schedules=0"
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]
    names = {p.name for p in Path(scratch / "kept").glob("*/*") if p.is_dir()}
    assert "points" not in names and {"points-w1", "points-w2"} <= names
    assert [p.parent.name for p in Path(scratch / "kept").glob("*/*/real-segment")] == ["sample"]


def test_the_workers_inherit_what_the_dealt_items_import(pytester: pytest.Pytester) -> None:
    """hypothesis (the schedules items') is imported once, before the workers fork, not by each worker and again by
    the pytest process for hypothesis's terminal summary: the fork happens before the first item starts, so what
    the pytest process has imported by then every worker inherited."""
    add_research_spec(pytester)
    seen = pytester.path / "seen.txt"
    pytester.makeconftest(
        "import sys\n"
        "def pytest_runtest_logstart(nodeid, location):\n"
        f"    with open({str(seen)!r}, 'a') as out:\n"
        "        out.write(str('hypothesis.core' in sys.modules) + '\\n')\n"
    )
    result = pytester.runpytest_subprocess(*BASE, "--strands-chaos-workers=2", "--strands-chaos-max-points=5")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]
    assert seen.read_text().splitlines()[0] == "True"


@pytest.mark.slow
def test_golden_runs_are_computed_in_forked_children_and_the_run_reports_what_the_serial_run_reports(
    pytester: pytest.Pytester,
) -> None:
    """With 2 workers, the second spec file's golden run is computed in a child forked before collection (its
    scratch directory tagged `-g1`, its golden-run file left in the shared directory) while this process computes
    the first's (and writes its file too); every item, text and report equals the serial run's."""
    add_research_spec(pytester)
    add_research_spec(pytester, "triage.strands.yaml", EXAMPLES / "routing-support-triage.strands.yaml")
    scratch = pytester.path / "scratch"
    pytester.makeconftest(
        "import shutil\n"
        "def pytest_sessionfinish(session):\n"
        "    from pytest_strands.items import SUITE\n"
        f"    shutil.copytree(session.config.stash[SUITE].workdir, {str(scratch)!r}, symlinks=True)\n"
    )
    serial = _run(pytester, "goldens", 0, "--strands-chaos-max-points=20")
    shutil.rmtree(scratch)
    forked = _run(pytester, "goldens", 2, "--strands-chaos-max-points=20")
    assert serial["ret"] == pytest.ExitCode.OK and len(serial["cases"]) > 40  # type: ignore[arg-type]
    _same(serial, forked)
    assert [p.name for p in scratch.glob("*-g1")] == ["0001-triage.strands.yaml-g1"]
    assert len(list((scratch / "goldens").glob("*.golden"))) == 2  # each computed once, by the child or here
