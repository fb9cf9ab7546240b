"""A Graph and a Swarm with DurableSessionManager, SIGKILLed (a forked child) at every node boundary and every
store commit, then resumed in a fresh child by calling them again with the task: the uninterrupted run's
status, node order, results and node conversations; no stored tool result or model turn produced again. The
scenarios run through the agent engine (faults/agents/engine.py) and its judge, as `strands_chaos.run_agent`
does."""

from __future__ import annotations

import pytest

from strands_durable.faults.agents import multiagent


@pytest.mark.long
@pytest.mark.parametrize("scenario", multiagent.SCENARIOS)
def test_killed_at_every_point_resumes_as_the_uninterrupted_run(scenario, tmp_path):
    golden, outcomes = multiagent.explore(scenario, tmp_path)
    assert not golden.problems, golden.problems
    for node in multiagent.SCRIPTS[scenario]:  # every node boundary is among the kill points, and every node ran
        assert f"hook/node:{node}/unit.before" in golden.point_ids
        assert f"hook/node:{node}/unit.after" in golden.point_ids
    [result] = golden.results
    assert result["order"] == multiagent.ORDERS[scenario]
    assert any("/sync/" in point for point in golden.point_ids)
    assert sorted(o.point for o in outcomes) == sorted(golden.point_ids)
    assert all(o.fault == "kill" and o.fired for o in outcomes), [o.describe() for o in outcomes if not o.fired]
    failed = [str(finding) for outcome in outcomes for finding in outcome.findings]
    assert not failed, "\n".join(failed)


@pytest.mark.slow
def test_a_swarm_whose_failed_end_was_stored_is_not_run_again(tmp_path):
    """The revisiting Swarm ends at its handoff limit (failed); killed once that end is stored, its task counts as
    answered: calling it again would be a new run (a failed end is not returned again), so the resume leaves it."""
    from strands_durable.faults.agents.engine import crash_at, run_golden
    from strands_durable.faults.agents.run import AgentChaos

    chaos = AgentChaos(
        multiagent.factory("swarm-revisit"), (multiagent.TASK,), session_id=multiagent.SESSION_ID, faults=("kill",)
    )
    golden = run_golden(chaos, tmp_path)
    assert golden.results[0]["status"] == "Status.FAILED"
    outcome = crash_at(golden, "multiagent/end/store.after_commit", "kill")
    assert outcome.fired and outcome.acknowledged == 1
    assert outcome.ok, outcome.describe()
    assert all(not resumed.requests for resumed in outcome.resumed)  # nothing asked the model again


def test_an_unknown_scenario_is_one_error_line_and_exit_2(capsys):
    assert multiagent.main(["graph", "pipeline"]) == 2
    out, err = capsys.readouterr()
    assert (
        out == "" and err == "Error: unknown scenario 'pipeline'; choose from graph, graph-loop, swarm, swarm-revisit\n"
    )
