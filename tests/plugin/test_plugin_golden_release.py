"""A workflow's golden runs are let go once its last item has run (pytest_strands/release.py), so the later items'
full collections and the interpreter's exit no longer walk them: a probe in the inner session holds weak references
to every golden run its items hold and counts, at each workflow's first item and at the session's end, how many of
each workflow's are still alive."""

from __future__ import annotations

import json

import pytest

from tests.plugin.support import EXAMPLES, add_research_spec, summary

PROBE = """
import gc
import json
import weakref

REFS = {}  # spec file name -> {id: weak reference} of the golden runs its items hold
SEEN = []  # (workflow starting, or "end"; {spec file name: golden runs alive})


def _goldens(item):
    run = getattr(item, "run", None)  # an order's item; the schedules item's orders are golden runs
    orders = item.orders if type(item).__name__ == "ScheduleItem" else []
    return [getattr(item, "golden", None), getattr(run, "golden", None), *orders]


def pytest_collection_finish(session):
    for item in session.items:
        for golden in _goldens(item):
            if golden is not None:
                REFS.setdefault(item.path.name, {})[id(golden)] = weakref.ref(golden)


def _alive():
    gc.collect()
    return {name: sum(ref() is not None for ref in refs.values()) for name, refs in REFS.items()}


def pytest_runtest_logstart(nodeid, location):
    name = nodeid.split("::")[0].rsplit("/", 1)[-1]
    if not SEEN or SEEN[-1][0] != name:
        SEEN.append((name, _alive()))


def pytest_sessionfinish(session):
    SEEN.append(("end", _alive()))
    (session.config.rootpath / "alive.json").write_text(json.dumps(SEEN))
"""
FIRST, SECOND = "a-research.strands.yaml", "b-scan.strands.yaml"
CHAOS = ("--strands-chaos", "--strands-chaos-max-points=2", "-p", "no:cacheprovider")


@pytest.mark.parametrize("workers", [0, 2], ids=["serial", "forked-workers"])
def test_a_workflows_golden_runs_are_freed_once_its_last_item_has_run(pytester: pytest.Pytester, workers: int) -> None:
    add_research_spec(pytester, FIRST)
    add_research_spec(pytester, SECOND, source=EXAMPLES / "parallel-market-scan.strands.yaml")  # has unit orders
    pytester.makeconftest(PROBE)
    result = pytester.runpytest_subprocess(*CHAOS, "--strands-chaos-schedules=1", f"--strands-chaos-workers={workers}")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert summary(result)["workflows"] == 2
    seen = json.loads((pytester.path / "alive.json").read_text())
    assert [name for name, _ in seen] == [FIRST, SECOND, "end"]
    (_, at_first), (_, at_second), (_, at_end) = seen
    assert at_first[FIRST] >= 1 and at_first[SECOND] >= 2  # the scan's golden run and its orders' are held
    assert at_second == {FIRST: 0, SECOND: at_first[SECOND]}  # the research workflow's have been let go
    assert at_end == {FIRST: 0, SECOND: 0}


TOTALS_PROBE = """
import pytest


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    from pytest_strands.plugin import TOTALS

    totals = config.stash[TOTALS]
    recorded = getattr(totals, "recorded", len(totals.items))  # before the count: every record was kept
    (config.rootpath / "kept.txt").write_text(f"{len(totals.items)} {recorded}")
"""


@pytest.mark.parametrize("report", [False, True], ids=["no-report", "json-report"])
def test_the_session_keeps_per_item_records_only_for_a_report(pytester: pytest.Pytester, report: bool) -> None:
    """The totals' per-item records are read only by the JSON and HTML reports: without either, the session adds
    up each item and keeps nothing of it to its end."""
    add_research_spec(pytester)
    pytester.makeconftest(TOTALS_PROBE)
    out = pytester.path / "chaos.json"
    reported = [f"--strands-chaos-report={out}"] if report else []
    result = pytester.runpytest_subprocess(*CHAOS, "--strands-chaos-schedules=0", *reported)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert summary(result)["points"] == 2
    kept, recorded = map(int, (pytester.path / "kept.txt").read_text().split())
    assert recorded == 3  # the golden item and its two points
    assert kept == (recorded if report else 0)
    if report:
        assert len(json.loads(out.read_text())["items"]) == recorded
