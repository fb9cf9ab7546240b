"""A Graph and a Swarm with DurableSessionManager, SIGKILLed (a forked child) at every node boundary and every
store commit, then resumed in a fresh child by calling them again with the task: the uninterrupted run's
status, node order, results and node conversations; no stored tool result or model turn produced again."""

from __future__ import annotations

import pytest

from strands_durable.faults.agents import multiagent


@pytest.mark.long
@pytest.mark.parametrize("scenario", multiagent.SCENARIOS)
def test_killed_at_every_point_resumes_as_the_uninterrupted_run(scenario, tmp_path):
    golden, judged = multiagent.explore(scenario, tmp_path)
    for node in multiagent.SCRIPTS[scenario]:  # every node boundary is among the kill points, and every node ran
        assert f"hook/node:{node}/unit.before" in golden.point_ids
        assert f"hook/node:{node}/unit.after" in golden.point_ids
    assert golden.comparable["order"] == multiagent.ORDERS[scenario]
    assert any("/sync/" in point for point in golden.point_ids)
    assert list(judged) == golden.point_ids
    failed = [str(finding) for findings in judged.values() for finding in findings]
    assert not failed, "\n".join(failed)
