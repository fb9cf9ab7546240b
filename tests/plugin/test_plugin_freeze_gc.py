"""`--strands-chaos-freeze-gc` (ini `strands_chaos_freeze_gc`) is the one process tuning the plugin keeps, and it is
off unless asked for (faults/kit/collector.py, docs/chaos-plugin.md); the session turns it off again at its end."""

from __future__ import annotations

import pytest

from tests.plugin.support import add_research_spec

PROBE = """
from strands_durable.faults.kit.collector import collecting_less


def pytest_sessionstart(session):
    (session.config.rootpath / "collecting-less.txt").write_text(repr(collecting_less()))
"""
RUN = ["--strands-chaos", "--strands-chaos-max-points=1", "--strands-chaos-schedules=0", "-p", "no:cacheprovider"]


@pytest.mark.parametrize(
    ("flag", "ini", "on"),
    [
        (None, None, False),
        ("--strands-chaos-freeze-gc", None, True),
        (None, "strands_chaos_freeze_gc = true", True),
    ],
    ids=["default", "flag", "ini"],
)
def test_the_collector_tuning_is_on_only_when_asked_for(
    pytester: pytest.Pytester, flag: str | None, ini: str | None, on: bool
) -> None:
    from strands_durable.faults.kit.collector import collecting_less

    add_research_spec(pytester)
    pytester.makeconftest(PROBE)
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    result = pytester.runpytest(*RUN, *([flag] if flag else []))
    result.assert_outcomes(passed=2)
    assert (pytester.path / "collecting-less.txt").read_text() == repr(on)
    assert not collecting_less()  # the session's end turned it off for whatever runs next in this process
