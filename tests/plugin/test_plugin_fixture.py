"""The `strands_chaos` fixture and marker: a user test runs its own spec, variables and Python tools under chaos."""

from __future__ import annotations

import pytest

from tests.plugin.support import summary

SPEC = """
version: 0
name: lookups
runtime:
  provider: openai          # ignored under chaos: the synthetic model answers
  model_id: gpt-4o-mini
inputs:
  required:
    city: {type: string}
tools:
  python:
    - calculator
agents:
  scout:
    prompt: You look things up about {{ city }}.
    tools: [calculator, lookup_population]
pattern:
  type: chain
  config:
    steps:
      - agent: scout
        input: "How many people live in {{ city }}? Use your tools."
      - agent: scout
        input: "Double-check: {{ last_response }}"
"""

TEST = '''
import pytest
from strands import tool

CALLS = []


@tool
def lookup_population(city: str) -> str:
    """Look up a city's population.

    Args:
        city: The city.
    """
    CALLS.append(city)
    return f"{city}: 700000"


@pytest.mark.strands_chaos(max_points=15)
def test_lookups_survive_every_interrupt(strands_chaos):
    tools = {"lookup_population": lookup_population}
    outcomes = strands_chaos.run("lookups.yaml", variables={"city": "Oslo"}, tools=tools)
    assert len(outcomes) == 15 and all(o.ok for o in outcomes)
    assert CALLS  # the user's own Python tool ran under chaos


@pytest.mark.strands_chaos
def test_a_broken_expectation_is_reported(strands_chaos):
    with pytest.raises(AssertionError, match="golden run failed"):
        strands_chaos.run("lookups.yaml")  # the required input `city` is missing
'''


def test_the_fixture_runs_a_spec_with_variables_and_python_tools(pytester: pytest.Pytester) -> None:
    (pytester.path / "lookups.yaml").write_text(SPEC)
    pytester.makepyfile(test_lookups=TEST)
    result = pytester.runpytest_inprocess("--strands-chaos", "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=2)
    totals = summary(result)
    assert totals["points"] == 15 and totals["workflows"] == 1 and totals["divergences"] == 1


def test_marked_tests_are_skipped_without_the_flag(pytester: pytest.Pytester) -> None:
    (pytester.path / "lookups.yaml").write_text(SPEC)
    pytester.makepyfile(test_lookups=TEST)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "-rs")
    result.assert_outcomes(skipped=2)
    assert "strands-chaos tests run with --strands-chaos" in result.stdout.str()


SCHEDULE_TEST = '''
import pytest

from strands import tool


@tool
def lookup_population(city: str) -> str:
    """Look up a city's population.

    Args:
        city: The city.
    """
    return f"{city}: 700000"


@pytest.mark.strands_chaos(spec="lookups.yaml", tools={"lookup_population": lookup_population})
def test_an_unknown_point_is_named(strands_chaos):
    with pytest.raises(AssertionError, match="'no/such/point' is not a crash point of lookups.yaml"):
        strands_chaos.run_schedule(["no/such/point"], variables={"city": "Oslo"})


@pytest.mark.strands_chaos(spec="lookups.yaml")
def test_a_failing_golden_run_is_said_as_for_run(strands_chaos):
    with pytest.raises(AssertionError, match="golden run failed"):
        strands_chaos.run_schedule(["anything"])  # the required input `city` is missing
'''


def test_run_schedule_names_an_unknown_point_and_a_failing_golden_run_as_run_does(pytester: pytest.Pytester) -> None:
    (pytester.path / "lookups.yaml").write_text(SPEC)
    pytester.makepyfile(test_schedules=SCHEDULE_TEST)
    result = pytester.runpytest_inprocess("--strands-chaos", "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=2)
