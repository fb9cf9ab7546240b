"""A worker upgraded mid-run finishes the run: started on release 1's workflow (tests/temporal/workflow_v1.py, the
code as it first shipped), its worker SIGKILLed after a unit committed, finished by a worker on today's code.

Temporal replays the run's history on today's workflow; `workflow.patched("progress-memo")` answers False for a
run release 1 started (the decision holds for the whole run), so it keeps release 1's commands to its end, while a
run today's worker starts records the patch marker and keeps its progress in the memo.
"""

from __future__ import annotations

import asyncio
import signal

from strands_durable import load_session
from strands_durable.faults.kit.oracle import comparable, first_difference, stored_violations
from strands_durable.store import open_store
from tests.temporal.support import (
    ROOT,
    SPECS,
    activity_units,
    history_json,
    patches_and_memos,
    start_worker,
    strands,
    wait_for,
)
from tests.temporal.test_temporal_runs import local_run, only_session, started_id, temporal_run, without_artifact_paths


def test_a_run_started_on_the_previous_release_finishes_on_a_worker_with_todays_code(
    temporal_server, task_queue, workers, tmp_path
):
    sessions = tmp_path / "sessions"
    env = {"STRANDS_TEST_TOOL_SECONDS": "1.0", "STRANDS_TEMPORAL_HEARTBEAT_TIMEOUT": "5"}
    old = start_worker(workers, temporal_server, str(sessions), task_queue, test_worker=("--release", "1"), **env)
    spec = SPECS / "slow-chain.strands.yaml"
    started = temporal_run(spec, temporal_server, sessions, tmp_path / "out", task_queue, "--detach", **env)
    assert started.returncode == 0, started.stdout + started.stderr
    session_id = only_session(sessions)
    store = open_store(sessions)
    wait_for(lambda: "step[0]" in store.load(session_id).units, 90, "release 1 committing the first unit")
    old.process.send_signal(signal.SIGKILL)
    old.process.wait()
    new = start_worker(workers, temporal_server, str(sessions), task_queue, **env)  # `strands worker`, today's code
    followed = strands(
        "run", "--resume", session_id, "--engine", "temporal", "--temporal", temporal_server,
        "--sessions-dir", str(sessions), timeout=120,  # a nondeterministic replay would hang here
    )  # fmt: skip
    assert followed.returncode == 0, followed.stdout + followed.stderr
    state = load_session(session_id, store=store)
    assert state.status == "completed" and stored_violations(state) == []
    assert first_difference(local_run(spec, tmp_path), without_artifact_paths(comparable(state))) is None
    ran_on = {identity.split("@")[0] for _, identity in asyncio.run(activity_units(temporal_server, session_id))}
    assert ran_on == {old.identity, new.identity}, ran_on
    assert patches_and_memos(asyncio.run(history_json(temporal_server, session_id))) == ([], 0)

    fresh = temporal_run(ROOT / "examples" / "chain-research.strands.yaml", temporal_server, sessions,
                         tmp_path / "fresh", task_queue)  # fmt: skip
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    patches, memos = patches_and_memos(asyncio.run(history_json(temporal_server, started_id(fresh))))
    assert patches == ["progress-memo"] and memos >= 2
