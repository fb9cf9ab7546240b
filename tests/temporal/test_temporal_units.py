"""Sibling units of one run at the same time on two workers (sessions on S3, unit leases): their tools' intervals
overlap on different pids and the result equals the local run; a worker frozen (SIGSTOP) inside one sibling's
tool is replaced by the unit's next attempt on the other worker at once (no lease TTL to wait out), and once
continued (SIGCONT) the frozen attempt's commit is refused: it adds no commit object."""

from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter
from pathlib import Path

from strands_durable import load_session
from strands_durable.faults.kit.oracle import comparable, first_difference, stored_violations
from strands_durable.store import open_store
from tests.temporal.support import SPECS, activity_units, start_worker, strands, wait_for
from tests.temporal.test_temporal_runs import local_run, only_session, temporal_run, without_artifact_paths

SPEC = SPECS / "two-tasks.strands.yaml"
UNITS = ["task:leases", "task:fencing"]
LONG_LEASE_S = "90"  # a retried attempt that waited for this lease to expire would outlast the test's waits


def _intervals(path: Path) -> dict[str, list[tuple[float, float]]]:
    """pid -> (start, end) of each finished tool call; a call still running ends at +inf."""
    found: dict[str, list[tuple[float, float]]] = {}
    open_calls: dict[tuple[str, str], float] = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        kind, pid, at, query = line.split(" ", 3)
        if kind == "start":
            open_calls[(pid, query)] = float(at)
        else:
            found.setdefault(pid, []).append((open_calls.pop((pid, query)), float(at)))
    for (pid, _query), began in open_calls.items():
        found.setdefault(pid, []).append((began, float("inf")))
    return found


def _overlap(first: list[tuple[float, float]], second: list[tuple[float, float]]) -> float:
    """Seconds during which some call of `first` and some call of `second` both ran."""
    return sum(
        max(0.0, min(a_end, b_end) - max(a_start, b_start)) for a_start, a_end in first for b_start, b_end in second
    )


def _commit_keys(store, session_id: str) -> list[str]:
    return [item.key for item in store.objects.list(store.keys.commits(session_id))]


def _records(store, session_id: str) -> list[dict]:
    return [line.record for line in store.read(session_id).records]


def test_sibling_units_run_at_once_on_two_workers_and_equal_the_local_run(
    temporal_server, task_queue, workers, space, s3_env, tmp_path
):
    intervals = tmp_path / "intervals.txt"
    env = {"STRANDS_TEST_INTERVALS": str(intervals), "STRANDS_TEST_TOOL_SECONDS": "1.5"}
    first = start_worker(workers, temporal_server, space.url, task_queue, units=1, **env)
    second = start_worker(workers, temporal_server, space.url, task_queue, units=1, **env)
    result = temporal_run(SPEC, temporal_server, space.url, tmp_path / "out", task_queue)
    assert result.returncode == 0, result.stdout + result.stderr
    session_id = only_session(space.url)
    calls = _intervals(intervals)
    assert set(calls) == {first.identity, second.identity}, calls  # each worker ran one sibling's tools
    overlap = _overlap(calls[first.identity], calls[second.identity])
    assert overlap > 1.0, f"the siblings' tool calls overlapped {overlap:.2f} s: {calls}"
    state = load_session(session_id, store=open_store(space.url))
    assert stored_violations(state) == []
    assert first_difference(local_run(SPEC, tmp_path), without_artifact_paths(comparable(state))) is None
    ran = Counter(unit for unit, _ in asyncio.run(activity_units(temporal_server, session_id)) if unit)
    assert ran == Counter(UNITS), ran
    assert not [r for r in _records(open_store(space.url), session_id) if "fence" in r], "nobody was fenced"


def test_a_frozen_sibling_is_taken_over_at_once_and_its_commit_is_refused_after_it_wakes(
    temporal_server, task_queue, workers, space, s3_env, tmp_path
):
    intervals = tmp_path / "intervals.txt"
    env = {
        "STRANDS_TEST_INTERVALS": str(intervals),
        "STRANDS_TEST_TOOL_SECONDS": "1.5",
        "STRANDS_S3_LEASE_TTL": LONG_LEASE_S,
        "STRANDS_TEMPORAL_HEARTBEAT_TIMEOUT": "5",
    }
    first = start_worker(workers, temporal_server, space.url, task_queue, units=1, **env)
    second = start_worker(workers, temporal_server, space.url, task_queue, units=1, **env)
    started = temporal_run(SPEC, temporal_server, space.url, tmp_path / "out", task_queue, "--detach", **env)
    assert started.returncode == 0, started.stdout + started.stderr
    session_id = only_session(space.url)
    store = open_store(space.url)

    def both_inside_tools() -> bool:
        calls = _intervals(intervals)
        return len(calls) == 2 and all(any(end == float("inf") for _, end in spans) for spans in calls.values())

    wait_for(both_inside_tools, 90, "both siblings inside a tool on their workers")
    first.process.send_signal(signal.SIGSTOP)
    frozen_at = time.monotonic()
    followed = strands(
        "run", "--resume", session_id, "--engine", "temporal", "--temporal", temporal_server,
        "--sessions-dir", space.url, timeout=240, **env,
    )  # fmt: skip
    assert followed.returncode == 0, followed.stdout + followed.stderr
    took = time.monotonic() - frozen_at
    assert took < float(LONG_LEASE_S), f"the run finished {took:.0f} s after the freeze: it waited for the lease"
    state = load_session(session_id, store=store)
    assert state.status == "completed" and stored_violations(state) == []
    assert first_difference(local_run(SPEC, tmp_path), without_artifact_paths(comparable(state))) is None
    fences = [r["fence"] for r in _records(store, session_id) if "fence" in r]
    assert [(f["unit"], f["attempt"], f["pid"]) for f in fences] == [(f["unit"], 2, second.process.pid) for f in fences]
    assert len(fences) == 1 and fences[0]["unit"] in UNITS, fences
    frozen_token = fences[0]["replaces"]
    objects_before = _commit_keys(store, session_id)

    first.process.send_signal(signal.SIGCONT)  # it finishes its tool and tries to commit the result
    wait_for(lambda: all(end != float("inf") for end in _ends(intervals, first.identity)), 30, "the frozen tool")
    time.sleep(3.0)  # its commit attempt: a PUT at a taken key, the fence read back, the attempt failed
    assert _commit_keys(store, session_id) == objects_before, "the frozen attempt added a commit object"
    records = _records(store, session_id)
    fence_at = next(r["seq"] for r in records if "fence" in r)
    assert not [r for r in records if r["seq"] > fence_at and r.get("writer") == frozen_token]
    assert any("fenced out" in line for line in first.lines), "".join(first.lines[-20:])


def _ends(intervals: Path, pid: str) -> list[float]:
    return [end for _, end in _intervals(intervals).get(pid, [])]
