"""Workers SIGKILLed at model boundaries while another serves the queue: with a model call in flight, and right
after a model turn was committed, before its tool ran. The run completes on the other worker, identical to its
local run, with valid histories; no committed model turn is requested again and no committed tool re-runs.

Both workers write every model request and tool boundary of their unit attempts to a ledger
(tests/temporal/worker_main.py, from the runner's crash points), so the test counts what each one asked for.
"""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path

from strands_durable import load_session
from strands_durable.faults.kit.oracle import comparable, first_difference, stored_violations
from strands_durable.store import open_store
from tests.temporal.support import SPECS, start_worker, strands, wait_for
from tests.temporal.test_temporal_runs import (
    local_run,
    only_session,
    temporal_run,
    tool_results,
    without_artifact_paths,
)

SPEC = SPECS / "slow-chain.strands.yaml"
QUICK_RETRY = {"STRANDS_TEMPORAL_HEARTBEAT_TIMEOUT": "5"}  # the dead attempt is retried after 5 s


def ledger_lines(ledger: Path) -> list[tuple[str, str, str]]:
    """(pid, site, path) of every line the workers wrote."""
    if not ledger.exists():
        return []
    return [tuple(line.split(" ", 2)) for line in ledger.read_text().splitlines()]  # type: ignore[misc]


def requested(lines: list[tuple[str, str, str]]) -> Counter:
    """How many times each model turn (by its path) was requested, over all workers."""
    return Counter(path for _, site, path in lines if site == "model.before")


def run_and_kill(temporal_server, task_queue, workers, tmp_path, doomed_args, doomed_env, at_the_boundary):
    """Start the run on a doomed worker, SIGKILL it once `at_the_boundary(lines)` holds, finish on a survivor.
    Returns the final state, the ledger lines, the tool executions (pid, query) and the two workers."""
    sessions = tmp_path / "sessions"
    ledger, tools = tmp_path / "ledger.txt", tmp_path / "tools.txt"
    env = {"STRANDS_TEST_LEDGER": str(tools), "STRANDS_TEST_TOOL_SECONDS": "0.2", **QUICK_RETRY}
    doomed = start_worker(workers, temporal_server, str(sessions), task_queue,
                          test_worker=("--ledger", str(ledger), *doomed_args), **env, **doomed_env)  # fmt: skip
    started = temporal_run(SPEC, temporal_server, sessions, tmp_path / "out", task_queue, "--detach", **QUICK_RETRY)
    assert started.returncode == 0, started.stdout + started.stderr
    session_id = only_session(sessions)
    wait_for(lambda: at_the_boundary(ledger_lines(ledger)), 90, "the doomed worker at the model boundary")
    doomed.process.send_signal(signal.SIGKILL)
    doomed.process.wait()
    at_kill = ledger_lines(ledger)
    survivor = start_worker(workers, temporal_server, str(sessions), task_queue,
                            test_worker=("--ledger", str(ledger)), **env)  # fmt: skip
    followed = strands(
        "run", "--resume", session_id, "--engine", "temporal", "--temporal", temporal_server,
        "--sessions-dir", str(sessions), timeout=180,
    )  # fmt: skip
    assert followed.returncode == 0, followed.stdout + followed.stderr
    state = load_session(session_id, store=open_store(sessions))
    assert state.status == "completed" and stored_violations(state) == []
    assert first_difference(local_run(SPEC, tmp_path), without_artifact_paths(comparable(state))) is None
    executions = [line.split() for line in tools.read_text().splitlines()]
    lines = ledger_lines(ledger)
    assert {pid for pid, _, _ in lines} == {doomed.identity, survivor.identity}
    return state, at_kill, lines, executions


def test_a_worker_killed_with_a_model_call_in_flight(temporal_server, task_queue, workers, tmp_path):
    def in_a_later_model_call(lines) -> bool:  # a turn was answered, and the worker waits on the next request
        return any(site == "model.answered" for _, site, _ in lines) and bool(lines) and lines[-1][1] == "model.before"

    state, at_kill, lines, executions = run_and_kill(
        temporal_server, task_queue, workers, tmp_path, (), {"STRANDS_SYNTHETIC_LATENCY_MS": "4000"},
        in_a_later_model_call,
    )  # fmt: skip
    in_flight = at_kill[-1][2]
    counts = requested(lines)
    assert counts[in_flight] == 2, counts  # the request that never answered is sent again, by the survivor
    assert {path: n for path, n in counts.items() if path != in_flight} == dict.fromkeys(set(counts) - {in_flight}, 1)
    # every committed tool result is replayed: each tool ran exactly once (none was in flight at the kill)
    assert len(executions) == tool_results(state), executions


def test_a_worker_killed_after_a_committed_model_turn_before_its_tool_ran(
    temporal_server, task_queue, workers, tmp_path
):
    def holding(lines) -> bool:  # the model asked for a tool; its turn is committed; the tool has not started
        return any(site == "holding" for _, site, _ in lines)

    state, at_kill, lines, executions = run_and_kill(
        temporal_server, task_queue, workers, tmp_path, ("--hold-at", "tool.before@step[1]"), {}, holding
    )
    held = next(path for _, site, path in at_kill if site == "holding")
    counts = requested(lines)
    assert set(counts.values()) == {1}, counts  # no model turn requested twice, the committed one included
    turn = held.rsplit("/tool[", 1)[0]
    assert turn in counts, (turn, counts)
    assert len(executions) == tool_results(state), executions  # the held tool ran once, on the survivor
    tool_starts = Counter(path for _, site, path in lines if site == "tool.before")
    assert tool_starts[held] == 2 and set(tool_starts.values()) <= {1, 2}, tool_starts
