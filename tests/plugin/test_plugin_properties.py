"""A chaos item's properties on a pytest-xdist worker: packed into one per item when no JUnit XML is written
(fewer elements for xdist to serialise per report), one each when it is; the controller's totals unpack them to
the same records, so the summary line, the JSON report and the JUnit XML are those of a serial run."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from pytest_strands.properties import PACKED, pack, unpack
from strands_durable.faults.kit.report import records_of
from strands_durable.faults.suite import schedules_properties
from tests.plugin.support import add_research_spec, summary

GOLDEN = [
    ("strands_chaos_workflow", "research.strands.yaml"),
    ("strands_chaos_explored", 0),
    ("strands_chaos_problems", "[]"),
    ("strands_chaos_site_kinds_found", "model.before,tool.executed"),
]
FAILING_POINT = [
    ("strands_chaos_workflow", "research.strands.yaml"),
    ("strands_chaos_point", "step[0]:a/tool.executed -> step[1]:a/model.before"),
    ("strands_chaos_explored", 0),
    ("strands_chaos_divergences", 1),
    ("strands_chaos_problems", json.dumps(["[diverged] the final state differs:\n- a\n+ b"])),
]


def test_packing_keeps_every_record_and_the_users_own_properties_in_place() -> None:
    # a failing schedule's record continues with the schedules tried (no workflow key of their own)
    ours = [*GOLDEN, *FAILING_POINT, *schedules_properties("research.strands.yaml", [], failed=True)]
    user = [("build", "1234"), ("owner", "team-a")]
    properties = [user[0], *ours, user[1]]
    pack(properties)
    assert properties[:2] == user and [name for name, _ in properties[2:]] == [PACKED]
    assert records_of(unpack(properties)) == records_of(ours)
    assert len(records_of(ours)) == 2 and records_of(ours)[1]["schedules"] == "[]"
    assert [p for p in unpack(properties) if not p[0].startswith("strands_chaos_")] == user


def test_properties_without_chaos_ones_are_left_alone() -> None:
    user = [("build", "1234")]
    pack(user)
    assert user == [("build", "1234")] and unpack(user) is user


CONTROLLER_PROBE = """
_where = {}


def pytest_configure(config):
    _where["worker"] = hasattr(config, "workerinput")


def pytest_runtest_logreport(report):
    if report.when == "call" and not _where["worker"]:  # the reports as the controller (or a serial run) has them
        names = [name for name, _ in report.user_properties if name.startswith("strands_chaos_")]
        with open("call-properties.txt", "a") as out:
            out.write(repr(names) + "\\n")
"""

FAST = ("--strands-chaos-max-points=6", "--strands-chaos-schedules=2", "-p", "no:cacheprovider")


def _call_properties(pytester: pytest.Pytester) -> list[list[str]]:
    path = pytester.path / "call-properties.txt"
    lines = [eval(line) for line in path.read_text().splitlines()]
    path.unlink()
    return lines


def _junit_cases(path: object) -> dict[str, list[tuple[str, str]]]:
    return {
        case.get("name", ""): [(p.get("name", ""), p.get("value", "")) for p in case.iter("property")]
        for case in ET.parse(str(path)).iter("testcase")
    }


@pytest.mark.slow
def test_xdist_workers_pack_the_properties_unless_junit_xml_is_written(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester)
    pytester.makeconftest(CONTROLLER_PROBE)
    serial = pytester.runpytest_subprocess("--strands-chaos", *FAST, "--junitxml=serial.xml")
    serial.assert_outcomes(passed=8)
    assert all(len(names) > 1 for names in _call_properties(pytester))  # one property each

    # one xdist worker: its reports reach the controller as with any number (the totals of several workers add up
    # as a serial run's: test_plugin_chaos.py::test_xdist_workers_report_the_same_totals)
    packed = pytester.runpytest_subprocess("--strands-chaos", *FAST, "-n", "1", "--strands-chaos-report=packed.json")
    packed.assert_outcomes(passed=8)
    assert _call_properties(pytester) == [["strands_chaos_packed"]] * 8  # what the controller received
    assert summary(packed) == summary(serial)
    assert json.loads((pytester.path / "packed.json").read_text())["crash_points_explored"] == 6

    spread = pytester.runpytest_subprocess("--strands-chaos", *FAST, "-n", "1", "--junitxml=spread.xml")
    spread.assert_outcomes(passed=8)
    assert all(len(names) > 1 for names in _call_properties(pytester))
    assert summary(spread) == summary(serial)
    assert _junit_cases(pytester.path / "spread.xml") == _junit_cases(pytester.path / "serial.xml")
