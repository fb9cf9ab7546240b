"""A run waiting for a human survives every worker going away, and `strands sessions show/list` report the
workflow's own status as the Temporal server holds it (no worker needed), or `unreachable` without failing."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import socket
import uuid

import pytest

from strands_durable import RunOptions, load_session, resume, run_workflow
from strands_durable.errors import HitlPaused
from strands_durable.faults.kit.oracle import comparable, first_difference, stored_violations
from strands_durable.runner.run import create_run
from strands_durable.store import open_store
from strands_durable.temporal.workflow import PAUSED
from tests.temporal.support import SPECS, start_worker, strands, wait_for
from tests.temporal.test_temporal_runs import only_session, temporal_run, without_artifact_paths

ANSWER = "approved, ship it"


def local_run_answered(spec, tmp_path, answer: str) -> dict:
    """The spec run locally at the Temporal runs' clock, paused for the human, resumed with `answer`."""
    store = open_store(tmp_path / "local-sessions")
    created = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    session_id = str(uuid.uuid4())
    with pytest.raises(HitlPaused):
        run_workflow(spec, RunOptions(out_dir=tmp_path / "local-out", created_at=created), store=store,
                     session_id=session_id)  # fmt: skip
    resume(session_id, RunOptions(hitl_response=answer), store=store)
    return without_artifact_paths(comparable(load_session(session_id, store=store)))


async def workflow_query(address: str, session_id: str) -> str:
    """The workflow's `status` query (a live worker answers it)."""
    from temporalio.client import Client

    client = await Client.connect(address)
    return await client.get_workflow_handle(session_id).query("status")


def workflow_line(shown: str) -> str:
    (line,) = [line for line in shown.splitlines() if "Workflow status" in line]
    return " ".join(line.strip(" │|").split()[2:])


def test_a_run_paused_for_a_human_is_answered_after_every_worker_restarted(
    temporal_server, task_queue, workers, tmp_path
):
    sessions = tmp_path / "sessions"
    first = start_worker(workers, temporal_server, str(sessions), task_queue)
    spec = SPECS / "hitl-chain.strands.yaml"
    started = temporal_run(spec, temporal_server, sessions, tmp_path / "out", task_queue, "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    session_id = only_session(sessions)
    store = open_store(sessions)
    wait_for(lambda: asyncio.run(workflow_query(temporal_server, session_id)) == PAUSED, 90, "the HITL pause")
    first.kill()  # every worker gone: the run waits on the server alone
    shown = strands("sessions", "show", session_id, "--sessions-dir", str(sessions))
    assert shown.returncode == 0, shown.stderr
    assert workflow_line(shown.stdout) == "RUNNING (paused for a human; 1 unit done)", shown.stdout
    second = start_worker(workers, temporal_server, str(sessions), task_queue)
    answered = strands(
        "run", "--resume", session_id, "--engine", "temporal", "--temporal", temporal_server,
        "--sessions-dir", str(sessions), "--hitl-response", ANSWER, timeout=120,
    )  # fmt: skip
    assert answered.returncode == 0, answered.stdout + answered.stderr
    state = load_session(session_id, store=store)
    assert state.status == "completed" and stored_violations(state) == []
    assert state.units["step[1]"]["response"] == ANSWER
    reference = local_run_answered(spec, tmp_path, ANSWER)
    assert first_difference(reference, without_artifact_paths(comparable(state))) is None
    assert second.process.poll() is None
    shown = strands("sessions", "show", session_id, "--sessions-dir", str(sessions))
    assert workflow_line(shown.stdout) == "COMPLETED", shown.stdout
    listed = strands("sessions", "list", "--temporal", "--json", "--sessions-dir", str(sessions))
    (entry,) = json.loads(listed.stdout)
    assert entry["temporal"]["status"] == "COMPLETED", listed.stdout
    offline = strands("sessions", "list", "--sessions-dir", str(sessions))
    assert "Temporal" not in offline.stdout.splitlines()[0] and "COMPLETED" not in offline.stdout


@pytest.fixture
def silent_server():
    """A loopback port that accepts connections and never answers (a hung server)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"127.0.0.1:{listener.getsockname()[1]}"


@pytest.mark.parametrize("server", ["refused", "silent"])
def test_a_temporal_run_whose_server_is_gone_shows_unreachable_and_the_command_succeeds(
    server, silent_server, tmp_path
):
    pytest.importorskip("temporalio")
    address = "127.0.0.1:9" if server == "refused" else silent_server
    store = open_store(tmp_path / "sessions")
    engine = {"name": "temporal", "address": address, "namespace": "default", "task_queue": "q"}
    _, session, _ = create_run(SPECS / "hitl-chain.strands.yaml", RunOptions(out_dir=tmp_path / "out"), store=store,
                               engine=engine)  # fmt: skip
    session_id = session.state.session_id
    session.close()
    shown = strands("sessions", "show", session_id, "--sessions-dir", str(tmp_path / "sessions"), timeout=30)
    assert shown.returncode == 0, shown.stderr
    expected = "Connection refused" if server == "refused" else f"no answer from {address} within 3s"
    assert workflow_line(shown.stdout) == f"unreachable ({expected})", shown.stdout
    listed = strands("sessions", "list", "--temporal", "--sessions-dir", str(tmp_path / "sessions"), timeout=30)
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()
    assert header.split()[-1] == "Temporal" and row.endswith(f"unreachable ({expected})"), listed.stdout
