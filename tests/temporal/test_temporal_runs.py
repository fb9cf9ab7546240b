"""Runs on Temporal equal local runs: every example, two workers, a worker killed inside a unit, HITL, cancel.

Everything is real: the Temporal dev server, `strands worker` processes, `strands run --engine temporal`, the
runner's plan mode inside the activities, and the session store on disk.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import signal
import uuid
from collections import Counter
from pathlib import Path

import pytest

from strands_durable import RunOptions, load_session, run_workflow
from strands_durable.faults.kit.oracle import comparable, first_difference, stored_violations
from strands_durable.store import open_store
from tests.temporal.support import ROOT, SPECS, activity_units, start_worker, strands, wait_for

CLOCK = "2026-01-01T00:00:00Z"
EXAMPLES = sorted((ROOT / "examples").glob("*.strands.yaml"))


def local_run(spec: Path, tmp_path: Path, **env: str) -> dict:
    """The same spec run locally, in process, at the same clock: what a Temporal run must equal."""
    store = open_store(tmp_path / "local-sessions")
    created = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    options = RunOptions(out_dir=tmp_path / "local-out", created_at=created, hitl_use_defaults=True)
    outcome = run_workflow(spec, options, store=store)
    return without_artifact_paths(comparable(load_session(outcome.session_id, store=store)))


def without_artifact_paths(view: dict) -> dict:
    view["artifacts"] = sorted(view["artifacts"].values())  # same bytes; the paths name each run's --out
    return view


def temporal_run(spec: Path, address: str, sessions: Path, out: Path, task_queue: str, *extra: str, **env: str):
    return strands(
        "run", str(spec), "--engine", "temporal", "--temporal", address, "--task-queue", task_queue,
        "--sessions-dir", str(sessions), "--out", str(out), "--clock", CLOCK, *extra, **env,
    )  # fmt: skip


def tool_results(state) -> int:
    return sum(
        1 for conv in state.conversations.values() for m in conv.messages
        for block in m.get("content", []) if "toolResult" in block
    )  # fmt: skip


def started_id(result) -> str:
    """The session id `strands run --engine temporal` printed as it started the run."""
    found = re.search(r"^Started run (\S+) on Temporal at ", result.stdout, re.M)
    assert found, result.stdout + result.stderr
    return found.group(1)


def only_session(sessions: Path | str) -> str:
    (session_id,) = open_store(sessions).session_ids()
    return session_id


@pytest.fixture(scope="module")
def examples_worker(temporal_dev_server, tmp_path_factory):
    """One worker for the examples (a worker per test would start strands-agents seven times): its queue, store."""
    temporal_server = temporal_dev_server.address()
    sessions = tmp_path_factory.mktemp("examples") / "sessions"
    queue = f"examples-{uuid.uuid4().hex[:12]}"
    started: list = []
    start_worker(started, temporal_server, str(sessions), queue)
    yield queue, sessions
    for worker in started:
        worker.kill()


@pytest.mark.parametrize("spec", EXAMPLES, ids=[p.name.split(".")[0] for p in EXAMPLES])
def test_every_example_on_temporal_equals_its_local_run(spec, temporal_server, examples_worker, tmp_path):
    task_queue, sessions = examples_worker
    result = temporal_run(spec, temporal_server, sessions, tmp_path / "out", task_queue)
    session_id = started_id(result)
    while result.returncode == 19:  # paused for a human, the run waiting on Temporal: answer with the default
        assert "The run waits on Temporal. Answer with: " in result.stdout
        pending = load_session(session_id, store=open_store(sessions)).pattern_state["pending_hitl"]
        result = strands(
            "run", "--resume", session_id, "--engine", "temporal", "--temporal", temporal_server,
            "--sessions-dir", str(sessions), "--hitl-response", pending["default"],
        )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Run {session_id} completed on Temporal" in result.stdout
    state = load_session(session_id, store=open_store(sessions))
    assert first_difference(local_run(spec, tmp_path), without_artifact_paths(comparable(state))) is None
    assert stored_violations(state) == []
    units = [unit for unit, _ in asyncio.run(activity_units(temporal_server, session_id)) if unit is not None]
    agent_units = {unit: 1 for unit, record in state.units.items() if record.get("type") != "hitl"}
    assert agent_units and Counter(units) == Counter(agent_units), "one activity per agent unit, each once"


def test_units_of_runs_spread_over_two_workers(temporal_server, task_queue, workers, tmp_path):
    sessions = tmp_path / "sessions"
    first = start_worker(workers, temporal_server, str(sessions), task_queue)
    second = start_worker(workers, temporal_server, str(sessions), task_queue)
    spec = ROOT / "examples" / "workflow-release-plan.strands.yaml"  # tasks that are ready together
    both = {first.identity, second.identity}
    spread: list[str] = []
    for attempt in range(6):  # the server hands each task to whichever worker polls first; soon one run gets both
        result = temporal_run(spec, temporal_server, sessions, tmp_path / f"out{attempt}", task_queue, "--force")
        assert result.returncode == 0, result.stdout + result.stderr
        session_id = started_id(result)
        ran_on = {identity.split("@")[0] for _, identity in asyncio.run(activity_units(temporal_server, session_id))}
        assert ran_on <= both
        if ran_on == both:
            spread.append(session_id)
            break
    assert spread, "no run had units on both workers in 6 runs"
    reference = local_run(spec, tmp_path)
    for session_id in open_store(sessions).session_ids():
        state = load_session(session_id, store=open_store(sessions))
        assert first_difference(reference, without_artifact_paths(comparable(state))) is None


def test_a_worker_killed_inside_a_tool_the_run_completes_on_the_other(temporal_server, task_queue, workers, tmp_path):
    sessions = tmp_path / "sessions"
    ledger = tmp_path / "ledger.txt"
    env = {"STRANDS_TEST_LEDGER": str(ledger), "STRANDS_TEST_TOOL_SECONDS": "1.5"}
    doomed = start_worker(workers, temporal_server, str(sessions), task_queue, **env)
    spec = SPECS / "slow-chain.strands.yaml"
    quick_retry = {"STRANDS_TEMPORAL_HEARTBEAT_TIMEOUT": "5"}  # the dead attempt is retried after 5 s, not 20
    started = temporal_run(spec, temporal_server, sessions, tmp_path / "out", task_queue, "--detach", **quick_retry)
    assert started.returncode == 0, started.stdout + started.stderr
    assert "Follow it with: " in started.stdout and "Cancel it with: " in started.stdout
    session_id = only_session(sessions)
    store = open_store(sessions)

    def inside_a_later_tool() -> bool:  # some tool result is committed and the worker is inside another tool
        lines = ledger.read_text().splitlines() if ledger.exists() else []
        committed = tool_results(store.load(session_id))
        return committed >= 1 and len(lines) > committed

    wait_for(inside_a_later_tool, 90, "the first worker inside a tool after a committed tool result")
    committed_before = load_session(session_id, store=store)
    doomed.process.send_signal(signal.SIGKILL)
    doomed.process.wait()
    survivor = start_worker(workers, temporal_server, str(sessions), task_queue, **env)
    followed = strands(
        "run", "--resume", session_id, "--engine", "temporal", "--temporal", temporal_server,
        "--sessions-dir", str(sessions), timeout=240,
    )  # fmt: skip
    assert followed.returncode == 0, followed.stdout + followed.stderr
    state = load_session(session_id, store=store)
    assert state.status == "completed"
    assert stored_violations(state) == []
    reference = local_run(spec, tmp_path)  # the local run writes no ledger (no env): same answers
    assert first_difference(reference, without_artifact_paths(comparable(state))) is None
    calls = ledger.read_text().splitlines()
    by_worker = Counter(line.split()[0] for line in calls)
    assert set(by_worker) == {str(doomed.process.pid), str(survivor.process.pid)}, by_worker
    committed_then = tool_results(committed_before)
    results = tool_results(state)
    # every committed result was replayed, never redone: at most the one tool in flight at the kill ran twice
    assert results <= len(calls) <= results + 1, (results, calls)
    assert by_worker[str(doomed.process.pid)] >= committed_then


def test_a_run_paused_for_a_human_is_answered_by_a_signal(temporal_server, task_queue, workers, tmp_path):
    sessions = tmp_path / "sessions"
    start_worker(workers, temporal_server, str(sessions), task_queue)
    spec = SPECS / "hitl-chain.strands.yaml"
    started = temporal_run(spec, temporal_server, sessions, tmp_path / "out", task_queue, "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    session_id = only_session(sessions)
    store = open_store(sessions)
    wait_for(lambda: store.load(session_id).status == "paused", 90, "the HITL pause")
    answered = strands(
        "run", "--resume", session_id, "--engine", "temporal", "--temporal", temporal_server,
        "--sessions-dir", str(sessions), "--hitl-response", "approved, ship it",
    )  # fmt: skip
    assert answered.returncode == 0, answered.stdout + answered.stderr
    assert "Answer sent" in answered.stdout
    state = load_session(session_id, store=store)
    assert state.status == "completed"
    assert state.units["step[1]"]["response"] == "approved, ship it"
    again = strands(
        "run", "--resume", session_id, "--engine", "temporal", "--temporal", temporal_server,
        "--sessions-dir", str(sessions),
    )  # fmt: skip
    assert again.returncode == 2 and "already completed" in again.stderr, again.stderr
    cancelled = strands(
        "run", "--cancel", session_id, "--engine", "temporal", "--temporal", temporal_server,
        "--sessions-dir", str(sessions),
    )  # fmt: skip
    assert cancelled.returncode == 2 and "Cancel requested" not in cancelled.stdout, cancelled.stdout
    assert cancelled.stderr.strip() == (
        f"Error: Run {session_id} already finished on Temporal (completed; session completed): nothing to cancel"
    )


def test_an_unreachable_server_is_exit_12_naming_it_and_creates_nothing(tmp_path):
    result = strands(
        "run", str(ROOT / "examples" / "chain-research.strands.yaml"), "--engine", "temporal",
        "--temporal", "127.0.0.1:9", "--sessions-dir", str(tmp_path / "sessions"),
    )  # fmt: skip
    assert result.returncode == 12, result.stderr
    assert result.stderr.strip().splitlines() == [
        "Error: Temporal server unreachable: 127.0.0.1:9 (namespace default): Connection refused"
    ]
    assert not (tmp_path / "sessions").exists() or not open_store(tmp_path / "sessions").session_ids()


def test_cancel_stops_the_run_at_a_safe_point_and_it_cannot_be_resumed(temporal_server, task_queue, workers, tmp_path):
    sessions = tmp_path / "sessions"
    ledger = tmp_path / "ledger.txt"
    env = {"STRANDS_TEST_LEDGER": str(ledger), "STRANDS_TEST_TOOL_SECONDS": "4.0"}  # the run outlasts the cancel
    start_worker(workers, temporal_server, str(sessions), task_queue, **env)
    spec = SPECS / "slow-chain.strands.yaml"
    started = temporal_run(spec, temporal_server, sessions, tmp_path / "out", task_queue, "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    session_id = only_session(sessions)
    wait_for(lambda: ledger.exists(), 60, "the first tool call")
    cancel = ["--engine", "temporal", "--temporal", temporal_server, "--sessions-dir", str(sessions)]
    cancelled = strands("run", "--cancel", session_id[:8], *cancel)
    assert cancelled.returncode == 0, cancelled.stderr
    assert f"Cancel requested for run {session_id}" in cancelled.stdout
    store = open_store(sessions)
    wait_for(lambda: store.load(session_id).status != "running", 90, "the run stopping at a safe point")
    state = load_session(session_id, store=store)
    assert state.reason == "interrupted" and stored_violations(state) == []
    wait_for(lambda: "CANCELED" in strands("sessions", "show", session_id, "--sessions-dir", str(sessions)).stdout,
             30, "the workflow status CANCELED in sessions show")  # fmt: skip
    again = strands("run", "--resume", session_id, *cancel)
    assert again.returncode == 2, again.stdout + again.stderr
    assert (
        again.stderr.strip()
        == f"Error: Run {session_id} was cancelled on Temporal: start a new run of its spec instead"
    )
    twice = strands("run", "--cancel", session_id, *cancel)
    assert twice.returncode == 2 and twice.stdout == "", twice.stdout + twice.stderr
    assert twice.stderr.strip() == (
        f"Error: Run {session_id} already finished on Temporal (canceled; session paused): nothing to cancel"
    )


def test_a_worker_that_cannot_import_a_python_tool_fails_the_run_and_resume_starts_a_new_attempt(
    temporal_server, task_queue, workers, tmp_path
):
    sessions = tmp_path / "sessions"
    start_worker(workers, temporal_server, str(sessions), task_queue, cwd=tmp_path, with_tests=False)
    result = temporal_run(SPECS / "slow-chain.strands.yaml", temporal_server, sessions, tmp_path / "out", task_queue)
    session_id = only_session(sessions)
    assert result.returncode == 18, result.stdout + result.stderr
    worker = workers[0].identity
    assert (
        f"✗ Run {session_id} failed: tool 'tests.temporal.tools:slow_lookup' (agents.researcher.tools) cannot be "
        "imported: importing tests.temporal.tools raised ModuleNotFoundError: No module named 'tests' (modules are "
        f"looked up on the Python path and in the spec's directory {SPECS}) (on worker {worker}@" in result.stderr
    ), result.stderr
    state = load_session(session_id, store=open_store(sessions))
    assert state.status == "failed" and not state.units  # nothing ran
    workers.pop(0).kill()  # the broken worker goes; one that can import the tool serves the new attempt
    start_worker(workers, temporal_server, str(sessions), task_queue)
    retried = strands(  # no --task-queue: the new attempt goes to the queue the run was started on
        "run", "--resume", session_id, "--engine", "temporal", "--temporal", temporal_server,
        "--sessions-dir", str(sessions),
    )  # fmt: skip
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert f"Starting a new attempt of run {session_id}" in retried.stdout
    assert load_session(session_id, store=open_store(sessions)).status == "completed"


def test_a_temporal_run_shows_its_engine_and_is_not_resumed_locally(temporal_server, examples_worker, tmp_path):
    task_queue, sessions = examples_worker
    spec = SPECS / "hitl-chain.strands.yaml"  # it waits for a human on Temporal: a run that is not finished
    result = temporal_run(spec, temporal_server, sessions, tmp_path / "out", task_queue, "--detach")
    assert result.returncode == 0, result.stdout + result.stderr
    session_id = started_id(result)
    store = open_store(sessions)
    wait_for(lambda: store.load(session_id).status == "paused", 90, "the HITL pause")
    shown = strands("sessions", "show", session_id, "--sessions-dir", str(sessions))
    assert f"Temporal at {temporal_server} (namespace default, task queue {task_queue})" in shown.stdout, (
        shown.stdout + shown.stderr
    )
    local = strands("run", "--resume", session_id, "--sessions-dir", str(sessions))
    assert local.returncode == 2, local.stdout + local.stderr
    assert local.stderr.strip() == (
        f"Error: Session {session_id} runs on Temporal ({temporal_server}, task queue {task_queue}): "
        f"follow or resume it with --engine temporal --temporal {temporal_server}"
    )
