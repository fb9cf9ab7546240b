"""Coverage as numbers: the summary, the JSON and the HTML report say, per fault class and site kind, how many crash
points were enumerated and how many were reached; a point enumerated and never reached fails `not-fired`, so a gate
cannot pass by exploring less."""

from __future__ import annotations

import json
import re

import pytest

from strands_durable.faults.kit.coverage import Coverage, site_kind
from strands_durable.faults.kit.findings import FaultRun
from tests.plugin.support import add_research_spec, summary

ARGS = ("--strands-chaos", "--strands-chaos-schedules=0", "-p", "no:cacheprovider", "-q")
COVERAGE = re.compile(
    r"^strands-chaos: coverage (?P<fault>\S+): (?P<reached>\d+) of (?P<enumerated>\d+) crash points reached "
    r"\((?P<sites>.*)\)$",
    re.M,
)

# a planted bug: once collection (and with it the golden run) is over, the runs never emit `unit.after`, so every
# crash point of that site kind is enumerated from the golden run and never reached
UNREACHED_UNIT_AFTER = """
from strands_durable import crashpoints

_real = crashpoints.CrashPoints.emit
DROPPING = []

def _emit(self, site, path="", **fields):
    if DROPPING and site == "unit.after":
        return None
    return _real(self, site, path, **fields)

crashpoints.CrashPoints.emit = _emit

def pytest_collection_finish(session):
    DROPPING.append(True)
"""


def coverage_lines(out: str) -> dict[str, dict[str, object]]:
    found = {}
    for match in COVERAGE.finditer(out):
        sites = dict(part.rsplit(" ", 1) for part in match["sites"].split(", "))
        found[match["fault"]] = {
            "reached": int(match["reached"]),
            "enumerated": int(match["enumerated"]),
            "sites": sites,
        }
    return found


@pytest.mark.slow
def test_the_reports_count_points_enumerated_and_reached_per_class_and_site_kind(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester)
    report, html = pytester.path / "chaos.json", pytester.path / "chaos.html"
    result = pytester.runpytest_subprocess(
        *ARGS,
        "--strands-chaos-max-points=12",
        "--strands-chaos-faults=interrupt,stream",
        f"--strands-chaos-report={report}",
        f"--strands-chaos-html={html}",
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    lines = coverage_lines(result.stdout.str())
    assert set(lines) == {"interrupt", "stream"}
    assert lines["interrupt"]["enumerated"] == lines["interrupt"]["reached"] == 12
    assert len(lines["interrupt"]["sites"]) >= 8  # the sample spreads over every site kind
    assert lines["stream"]["reached"] == lines["stream"]["enumerated"] > 0
    body = json.loads(report.read_text())["coverage"]["points"]
    assert body["interrupt"]["enumerated"] == body["interrupt"]["reached"] == 12
    assert sum(s["enumerated"] for s in body["interrupt"]["sites"].values()) == 12
    for site, shown in lines["interrupt"]["sites"].items():
        counts = body["interrupt"]["sites"][site]
        assert shown == f"{counts['reached']}/{counts['enumerated']}"
    page = html.read_text()
    assert 'id="coverage"' in page and '<tr data-fault="stream">' in page
    assert f"{body['interrupt']['reached']} / {body['interrupt']['enumerated']}" in page


@pytest.mark.slow
def test_points_enumerated_but_never_reached_fail_not_fired_and_show_in_coverage(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester)
    pytester.makeconftest(UNREACHED_UNIT_AFTER)
    report = pytester.path / "chaos.json"
    # every point by its real segment (a crash state derived from the golden run is reached there by construction)
    result = pytester.runpytest_subprocess(*ARGS, "--strands-chaos-real-segments", f"--strands-chaos-report={report}")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    body = json.loads(report.read_text())
    unit_after = body["coverage"]["points"]["interrupt"]["sites"]["unit.after"]
    assert unit_after["enumerated"] > 0 and unit_after["reached"] == 0
    assert (
        body["coverage"]["points"]["interrupt"]["reached"]
        == body["coverage"]["points"]["interrupt"]["enumerated"] - unit_after["enumerated"]
    )
    assert coverage_lines(out)["interrupt"]["sites"]["unit.after"] == f"0/{unit_after['enumerated']}"
    not_fired = [i for i in body["items"] if i.get("point", "").endswith("/unit.after")]
    assert len(not_fired) == unit_after["enumerated"]
    assert all(i["outcome"] == "failed" and i["fired"] == "" for i in not_fired)
    assert "[not-fired]" in out
    assert summary(result)["divergences"] >= unit_after["enumerated"]


def test_a_fault_class_counts_every_point_it_set_out_to_explore_and_those_it_reached() -> None:
    run = FaultRun("kill", "w.strands.yaml")
    for point in ("step[0]:a/unit.before", "step[0]:a/turn[0]/tool[1]:t/tool.before#2", "step[1]:b/unit.before"):
        run.explore_at(point)
    run.add("step[1]:b/unit.before", "SIGKILL", "not-fired", "the child finished without reaching the crash point")
    assert run.coverage() == {"tool.before": [1, 1], "unit.before": [2, 1]}
    totals = Coverage()
    totals.add(json.dumps({"kill": run.coverage()}))
    totals.add({"kill": {"unit.before": [1, 1]}})
    assert totals.totals("kill") == (4, 3)
    assert totals.lines() == [
        "strands-chaos: coverage kill: 3 of 4 crash points reached (tool.before 1/1, unit.before 2/3)"
    ]


def test_site_kinds_of_point_ids() -> None:
    assert site_kind("step[0]:researcher/turn[0]/tool[2]:calculator/tool.executed") == "tool.executed"
    assert site_kind("task:plan:planner/store.after_commit#3") == "store.after_commit"
    assert site_kind("op[12]") == "op" and site_kind("call[3]") == "call" and site_kind("paused") == "paused"
