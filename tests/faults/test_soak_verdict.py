"""The soak's verdict: PASS only when every (fault class, spec) pair ran and nothing was found; a pair that did
not run (the budget ran out before it, Ctrl+C) makes it INCOMPLETE, naming the pair, and never `passed: true`."""

from __future__ import annotations

from strands_durable.faults.kit.findings import FaultRun
from strands_durable.faults.soak import SoakResult

SPECS = ["specs/a.strands.yaml", "specs/b.strands.yaml"]


def _soak(ran: list[tuple[str, str]], **fields) -> SoakResult:
    """A soak over two specs and two classes in which the work items of `ran` came back, each with 3 points."""
    result = SoakResult(list(SPECS), ["interrupt", "kill"], seed=0, budget_s=130, **fields)
    for fault, spec in ran:
        result.runs.append(FaultRun(fault, spec, explored=3))
        result.explored[(fault, spec)] = 3
    return result


def test_a_budget_that_ran_out_before_the_second_spec_met_every_class_is_incomplete_naming_the_pair() -> None:
    result = _soak([("interrupt", SPECS[0]), ("kill", SPECS[0]), ("interrupt", SPECS[1])], out_of_budget=True)
    assert result.not_run() == []  # every class ran somewhere: not enough
    assert result.missing_pairs() == [("kill", SPECS[1])]
    assert result.verdict == "INCOMPLETE" and not result.passed
    lines = result.summary_lines()
    assert "Did not run: kill on b.strands.yaml" in lines
    assert lines[-1] == (
        "INCOMPLETE: 1 (fault class, spec) pair of 4 did not run: the budget ran out (raise --budget); what ran "
        "found no divergence, no invalid history, no data lost"
    )
    report = result.to_json()
    assert report["passed"] is False and report["verdict"] == "INCOMPLETE"
    assert report["missing_pairs"] == [{"fault": "kill", "spec": SPECS[1]}]


def test_an_interrupted_soak_never_passes_even_when_every_pair_ran() -> None:
    every_pair = [(fault, spec) for spec in SPECS for fault in ("interrupt", "kill")]
    assert _soak(every_pair).verdict == "PASS"
    interrupted = _soak(every_pair, interrupted=True)
    assert interrupted.verdict == "INCOMPLETE" and interrupted.to_json()["passed"] is False
    assert interrupted.summary_lines()[-1].startswith("INCOMPLETE: interrupted (Ctrl+C); ")


def test_a_pair_whose_work_item_explored_no_point_did_not_run_and_a_finding_fails_the_soak() -> None:
    result = _soak([("interrupt", SPECS[0]), ("kill", SPECS[0]), ("interrupt", SPECS[1])])
    result.runs.append(FaultRun("kill", SPECS[1]))  # came back without exploring anything
    result.explored[("kill", SPECS[1])] = 0
    assert result.missing_pairs() == [("kill", SPECS[1])]
    result.runs[0].add("p", "", "identical", "differs")
    assert result.verdict == "FAIL" and "Did not run: kill on b.strands.yaml" in result.summary_lines()


def test_two_specs_of_the_same_file_name_are_named_by_their_paths() -> None:
    result = SoakResult(["x/flow.strands.yaml", "y/flow.strands.yaml"], ["kill"], seed=0, budget_s=1)
    assert "Did not run: kill on x/flow.strands.yaml, kill on y/flow.strands.yaml" in result.summary_lines()
