"""Activity timeouts and attempts come from the spec's time budget and the environment, travel with the run, and
are what Temporal's history shows; model-call retries (`failure_policy`) stay with the runner inside the unit."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest

from strands_durable.errors import UsageError
from strands_durable.spec import load_spec
from strands_durable.store import open_store
from strands_durable.temporal.engine import ActivityLimits, activity_limits
from tests.temporal.support import history_json, start_worker, strands
from tests.temporal.test_temporal_runs import only_session, temporal_run

BUDGETED = """\
version: 0
name: budgeted-chain
runtime:
  provider: synthetic
  budgets:
    max_duration_s: 120
  failure_policy:
    retries: 4
agents:
  writer:
    prompt: You write short notes.
pattern:
  type: chain
  config:
    steps:
      - agent: writer
        input: "A note about timeouts."
      - agent: writer
        input: "Shorter: {{ last_response }}"
"""


@pytest.fixture
def budgeted(tmp_path):
    spec = tmp_path / "budgeted.strands.yaml"
    spec.write_text(BUDGETED, encoding="utf-8")
    return spec


def test_a_unit_attempt_may_take_the_specs_time_budget_plus_a_minute_and_the_environment_overrides(
    budgeted, monkeypatch
):
    for name in ("STRANDS_TEMPORAL_UNIT_TIMEOUT", "STRANDS_TEMPORAL_PLAN_TIMEOUT", "STRANDS_TEMPORAL_MAX_ATTEMPTS"):
        monkeypatch.delenv(name, raising=False)
    assert activity_limits(load_spec(budgeted).runtime) == ActivityLimits(180.0, 300.0, 50)
    assert activity_limits(None) == ActivityLimits(7200.0, 300.0, 50)  # no budget: two hours
    monkeypatch.setenv("STRANDS_TEMPORAL_UNIT_TIMEOUT", "45")
    monkeypatch.setenv("STRANDS_TEMPORAL_PLAN_TIMEOUT", "30")
    monkeypatch.setenv("STRANDS_TEMPORAL_MAX_ATTEMPTS", "7")
    assert activity_limits(load_spec(budgeted).runtime) == ActivityLimits(45.0, 30.0, 7)
    monkeypatch.setenv("STRANDS_TEMPORAL_MAX_ATTEMPTS", "2.5")
    with pytest.raises(UsageError, match="STRANDS_TEMPORAL_MAX_ATTEMPTS must be a whole number of at least 1"):
        activity_limits(None)
    assert ActivityLimits.recorded({"name": "temporal", "address": "a"}) == ActivityLimits()  # runs started before


def test_a_run_on_temporal_schedules_its_activities_with_the_spec_and_environment_limits(
    budgeted, temporal_server, task_queue, workers, tmp_path
):
    sessions = tmp_path / "sessions"
    start_worker(workers, temporal_server, str(sessions), task_queue)
    result = temporal_run(budgeted, temporal_server, sessions, tmp_path / "out", task_queue,
                          STRANDS_TEMPORAL_MAX_ATTEMPTS="7")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    session_id = only_session(sessions)
    scheduled = [
        event["activityTaskScheduledEventAttributes"]
        for event in asyncio.run(history_json(temporal_server, session_id))["events"]
        if event["eventType"] == "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED"
    ]
    limits = {
        (json.loads(base64.b64decode(a["input"]["payloads"][0]["data"]))["unit"] is None,
         a["startToCloseTimeout"], a["retryPolicy"]["maximumAttempts"])
        for a in scheduled
    }  # fmt: skip
    assert limits == {(True, "300s", 7), (False, "180s", 7)}, limits  # plan passes, units
    shown = strands("sessions", "show", session_id, "--json", "--sessions-dir", str(sessions))
    recorded = json.loads(shown.stdout)["temporal"]
    assert (recorded["unit_timeout_s"], recorded["plan_timeout_s"], recorded["max_attempts"]) == (180.0, 300.0, 7)


def test_a_bad_limit_in_the_environment_is_exit_2_naming_it_and_starts_nothing(
    budgeted, temporal_server, task_queue, tmp_path
):
    sessions = tmp_path / "sessions"
    result = temporal_run(budgeted, temporal_server, sessions, tmp_path / "out", task_queue,
                          STRANDS_TEMPORAL_UNIT_TIMEOUT="soon")  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip() == "Error: STRANDS_TEMPORAL_UNIT_TIMEOUT must be a number of seconds, not 'soon'"
    assert not sessions.exists() or not open_store(sessions).session_ids()
