"""Plan mode's unit passes commit only what commutes with a sibling's pass (sessions on S3 run them at once): no
status but a failure, no pattern position for a unit among concurrent siblings, no question to a human; plan
passes do those, and the run driven pass by pass equals the local run."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from strands_durable import RunOptions, run_workflow
from strands_durable.faults.kit.oracle import comparable, first_difference
from strands_durable.runner.plan import plan_step
from strands_durable.runner.run import create_run
from strands_durable.store import open_store
from strands_durable.store.wrapping import WrappingStore
from tests.conftest import EXAMPLES

SPEC = EXAMPLES / "parallel-market-scan.strands.yaml"  # three branches, one with a HITL step after its first
CREATED = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def _comparable(state) -> dict:
    view = comparable(state)
    view["artifacts"] = sorted(view["artifacts"].values())  # same bytes under each run's own --out
    return view


def test_unit_passes_of_siblings_commit_only_their_own_units_and_plan_passes_ask_the_human(tmp_path: Path) -> None:
    store = open_store(tmp_path / "sessions")
    _spec, session, _options = create_run(SPEC, RunOptions(out_dir=tmp_path / "out", created_at=CREATED), store=store)
    session.close()
    session_id = session.state.session_id
    plan = plan_step(session_id, RunOptions(), store=store)
    assert plan.status == "ready" and len(plan.ready) == 3, plan
    kinds_by_unit = {}
    for unit in plan.ready:
        recording = WrappingStore(store, record=True)
        outcome = plan_step(session_id, RunOptions(hitl_use_defaults=True), store=recording, unit=unit)
        assert outcome.status in ("ready", "paused"), outcome
        kinds_by_unit[unit] = {event["type"] for call in recording.commits for event in call.events}
    for unit, kinds in kinds_by_unit.items():
        assert kinds <= {"message", "tool_result", "tool_started", "conversation", "unit"}, (unit, kinds)
    state = store.load(session_id)
    assert "branch:competitors/step[1]" not in state.units, "a unit pass answered the HITL step"
    assert state.pattern_state == {} and state.status == "running"
    while True:  # the plan pass answers the question with its default, then the rest runs pass by pass
        plan = plan_step(session_id, RunOptions(hitl_use_defaults=True), store=store)
        if plan.status != "ready":
            break
        for unit in plan.ready:
            plan_step(session_id, RunOptions(), store=store, unit=unit)
    assert plan.status == "completed", plan
    state = store.load(session_id)
    assert state.units["branch:competitors/step[1]"]["response"] == "approved"
    assert state.pattern_state["reduce_response"] == state.units["reduce"]["response"]  # reduce runs alone
    options = RunOptions(out_dir=tmp_path / "local-out", hitl_use_defaults=True, created_at=CREATED)
    local = run_workflow(SPEC, options, store=store)
    assert first_difference(_comparable(store.load(local.session_id)), _comparable(state)) is None
