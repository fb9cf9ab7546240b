"""Runs on Temporal with sessions on S3 (the local SeaweedFS server): equal to local runs, and a worker frozen
past its lease (SIGSTOP) whose unit is retried on another worker cannot commit once it wakes (SIGCONT)."""

from __future__ import annotations

import signal

from strands_durable import load_session
from strands_durable.faults.kit.oracle import comparable, first_difference, stored_violations
from strands_durable.store import open_store
from tests.temporal.support import ROOT, SPECS, start_worker, strands, wait_for
from tests.temporal.test_temporal_runs import (
    local_run,
    only_session,
    temporal_run,
    tool_results,
    without_artifact_paths,
)

FAST_LEASE = {"STRANDS_S3_LEASE_TTL": "3", "STRANDS_S3_LEASE_SKEW": "0.5", "STRANDS_TEMPORAL_HEARTBEAT_TIMEOUT": "5"}


def test_a_run_with_sessions_on_s3_equals_its_local_run(temporal_server, task_queue, workers, space, s3_env, tmp_path):
    start_worker(workers, temporal_server, space.url, task_queue)
    start_worker(workers, temporal_server, space.url, task_queue)
    spec = ROOT / "examples" / "workflow-release-plan.strands.yaml"
    result = temporal_run(spec, temporal_server, space.url, tmp_path / "out", task_queue)
    assert result.returncode == 0, result.stdout + result.stderr
    session_id = only_session(space.url)
    state = load_session(session_id, store=open_store(space.url))
    assert stored_violations(state) == []
    assert first_difference(local_run(spec, tmp_path), without_artifact_paths(comparable(state))) is None
    listed = strands("sessions", "list", "--sessions-dir", space.url)
    assert listed.returncode == 0 and session_id[:8] in listed.stdout, listed.stdout + listed.stderr


def test_a_worker_frozen_past_its_lease_cannot_commit_after_another_took_its_unit(
    temporal_server, task_queue, workers, space, s3_env, tmp_path
):
    ledger = tmp_path / "ledger.txt"
    env = {"STRANDS_TEST_LEDGER": str(ledger), "STRANDS_TEST_TOOL_SECONDS": "1.0", **FAST_LEASE}
    frozen = start_worker(workers, temporal_server, space.url, task_queue, **env)
    spec = SPECS / "slow-chain.strands.yaml"
    started = temporal_run(spec, temporal_server, space.url, tmp_path / "out", task_queue, "--detach", **env)
    assert started.returncode == 0, started.stdout + started.stderr
    session_id = only_session(space.url)
    store = open_store(space.url)

    def inside_a_later_tool() -> bool:
        lines = ledger.read_text().splitlines() if ledger.exists() else []
        committed = tool_results(store.load(session_id))
        return committed >= 1 and len(lines) > committed

    wait_for(inside_a_later_tool, 90, "the first worker inside a tool after a committed tool result")
    frozen.process.send_signal(signal.SIGSTOP)
    before = tool_results(store.load(session_id))
    survivor = start_worker(workers, temporal_server, space.url, task_queue, **env)
    # the survivor's retried attempt fences the frozen one: it takes the expired lease and commits
    wait_for(lambda: tool_results(store.load(session_id)) > before, 120, "the retried unit committing on S3")
    frozen.process.send_signal(signal.SIGCONT)  # wakes inside its tool; its result commit must be refused
    followed = strands(
        "run", "--resume", session_id, "--engine", "temporal", "--temporal", temporal_server,
        "--sessions-dir", space.url, timeout=240, **env,
    )  # fmt: skip
    assert followed.returncode == 0, followed.stdout + followed.stderr
    state = load_session(session_id, store=store)
    assert state.status == "completed" and stored_violations(state) == []
    assert first_difference(local_run(spec, tmp_path), without_artifact_paths(comparable(state))) is None
    pids = {line.split()[0] for line in ledger.read_text().splitlines()}
    assert pids == {str(frozen.process.pid), str(survivor.process.pid)}, pids
