"""A crash (an in-process BaseException) at every crash point of a tool-using chain, then a resume in fresh
objects, yields the uninterrupted run: identical outputs and histories, no committed tool run twice, no
committed model turn requested twice, and a stored history that was valid at the moment of the crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable.crashpoints import CrashPoint, CrashPoints, InjectedCrash
from strands_durable.errors import DurableError
from strands_durable.faults.oracle import (
    RequestLog,
    committed_request_digests,
    comparable,
    first_difference,
    stored_violations,
    tool_ids_on_disk,
)
from strands_durable.runner.api import resume, run_workflow
from strands_durable.store import LocalStore
from strands_durable.store.journal import JOURNAL_NAME
from tests.core.support import ExecutionLog, counted_options

SPEC = Path(__file__).parent / "specs" / "chain-tools.strands.yaml"


def crash_at(target: str) -> CrashPoints:
    points = CrashPoints()
    fired = []

    def maybe_crash(point: CrashPoint) -> None:
        if point.id == target and not fired:
            fired.append(point)
            raise InjectedCrash(point)

    points.subscribe(maybe_crash)
    return points


def golden_run(root: Path) -> tuple[dict, list[str]]:
    seen: list[str] = []
    points = CrashPoints()
    points.subscribe(lambda p: seen.append(p.id))
    log = ExecutionLog(root / "exec.log")
    store = LocalStore(root / "sessions", strict=True)
    outcome = run_workflow(
        SPEC, counted_options(log, RequestLog(), out_dir=root / "out", crash_points=points), store=store
    )
    assert outcome.status == "completed"
    assert all(count == 1 for count in log.counts().values())
    return comparable(store.load(outcome.session_id)), seen


def crash_and_resume(root: Path, target: str) -> list[str]:
    """Run with a crash at `target`, resume in fresh objects; return the problems found (empty = pass)."""
    problems: list[str] = []
    log = ExecutionLog(root / "exec.log")
    first_requests, resumed_requests = RequestLog(), RequestLog()
    store = LocalStore(root / "sessions", strict=True)
    with pytest.raises(InjectedCrash):
        run_workflow(
            SPEC,
            counted_options(log, first_requests, out_dir=root / "out", crash_points=crash_at(target)),
            store=store,
        )
    (session_id,) = store.session_ids()
    crashed = LocalStore(root / "sessions").load(session_id)
    problems += [f"invalid stored history after the crash: {v}" for v in stored_violations(crashed)]
    committed = committed_request_digests(crashed)
    committed_tools = tool_ids_on_disk(store.directory_of(session_id) / JOURNAL_NAME)
    executed_before = log.counts()
    if crashed.status != "completed":
        fresh = LocalStore(root / "sessions", strict=True)
        try:
            outcome = resume(session_id, counted_options(log, resumed_requests), store=fresh)
        except DurableError as exc:
            return [*problems, f"resume failed: {exc}"], crashed
        if outcome.status != "completed":
            problems.append(f"resume ended {outcome.status}")
    final = LocalStore(root / "sessions").load(session_id)
    problems += [f"invalid history after resume: {v}" for v in stored_violations(final, mode="stored")]
    redone = [d for d in resumed_requests.digests if d in committed]
    if redone:
        problems.append(f"{len(redone)} committed model turn(s) requested again")
    for tool_use_id, count in log.counts().items():
        # at-least-once: a tool that ran but whose result was not committed may run once more
        limit = 1 if tool_use_id in committed_tools or not executed_before.get(tool_use_id) else 2
        if count > limit:
            problems.append(
                f"tool call {tool_use_id} executed {count} times (committed: {tool_use_id in committed_tools})"
            )
    return problems, final


def explore(root: Path, select=lambda point: True) -> tuple[list[str], int]:
    """Crash at every selected point of the golden run and resume; the failures found and points explored."""
    golden, points = golden_run(root / "golden")
    chosen = [p for p in points if select(p)]
    failures = []
    for index, target in enumerate(chosen):
        problems, final = crash_and_resume(root / f"p{index}", target)
        difference = first_difference(golden, comparable(final))
        if difference:
            problems.append(f"differs from the uninterrupted run at {difference}")
        failures += [f"{target}: {p}" for p in problems]
    return failures, len(chosen)


@pytest.mark.slow
def test_crash_at_every_point_resumes_to_the_uninterrupted_run(tmp_path: Path) -> None:
    _, points = golden_run(tmp_path / "probe")
    assert len(points) > 80, "the chain should expose unit, model, tool and store crash points"
    sites = {p.split("/")[-1].split("#")[0] for p in points}
    assert {
        "unit.before",
        "unit.after",
        "model.before",
        "model.answered",
        "tool.before",
        "tool.executed",
        "tool.committed",
        "store.before_commit",
        "store.after_commit",
    } <= sites
    failures, explored = explore(tmp_path)
    assert explored == len(points)
    assert not failures, "\n".join(failures[:20])


# -- the oracle catches real bugs: each mutation below must make the exploration fail ------------------------


def _tool_points(point: str) -> bool:
    return "tool.committed" in point or point.endswith("unit.after")


def test_oracle_catches_a_store_that_forgets_tool_results(tmp_path: Path, monkeypatch) -> None:
    from strands_durable.store import state as state_module

    monkeypatch.setitem(state_module._HANDLERS, "tool_result", lambda state, event: None)
    failures, explored = explore(tmp_path, _tool_points)
    assert explored > 0
    assert any("executed 2 times" in f for f in failures), failures[:5]


def test_oracle_catches_a_store_that_loses_its_last_commit(tmp_path: Path, monkeypatch) -> None:
    from strands_durable.store import local
    from strands_durable.store.journal import JournalContents

    real = local.read_journal

    def forgetful(path, data):
        contents = real(path, data)
        if len(contents.records) <= 2:
            return contents
        last_start = data.rstrip(b"\n").rfind(b"\n") + 1  # drop the last record as if it never reached disk
        return JournalContents(contents.records[:-1], last_start, torn_tail=True)

    monkeypatch.setattr(local, "read_journal", forgetful)
    failures, _ = explore(tmp_path, lambda p: p.endswith("tool.committed"))
    assert failures


def test_oracle_catches_a_runner_that_reruns_finished_units(tmp_path: Path, monkeypatch) -> None:
    from strands_durable.runner import units

    monkeypatch.setattr(units, "completed", lambda ctx, unit: None)
    failures, _ = explore(tmp_path, lambda p: p.endswith("unit.after"))
    assert any("requested again" in f or "differs" in f for f in failures), failures[:5]
