"""A warm resume (runner/prepared.py): what every resume of one workflow's session reads is built once and shared,
while each resume still runs in objects of its own (its session and lease, agents, models, the tools' workspace)."""

from __future__ import annotations

import contextlib
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from strands_durable import CrashPoints, InjectedCrash, LocalStore, resume, run_workflow
from strands_durable.crashpoints import CrashPoint
from strands_durable.errors import SessionInUse, SpecError
from strands_durable.faults.classes.explore import explore_point
from strands_durable.faults.kit.oracle import RequestLog, comparable, first_difference
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.runner.positions import check_committed_positions
from strands_durable.runner.prepared import prepare
from strands_durable.runner.reporter import RecordingReporter
from strands_durable.runner.run import SPEC_CHANGED_WARNING
from strands_durable.store.state import copy_state
from tests.conftest import REPO
from tests.core.support import ExecutionLog, counted_options

SPEC = Path(__file__).parent / "specs" / "chain-tools.strands.yaml"
WRITES_FILES = REPO / "examples" / "workflow-release-plan.strands.yaml"  # its planner writes with file_write


def _crashed_at(root: Path, point_id: str, spec: Path = SPEC) -> tuple[LocalStore, str]:
    """A session of `spec` in `root/sessions` that crashed at the first emission of `point_id`."""
    bus = CrashPoints()

    def crash(point: CrashPoint) -> None:
        if point.id == point_id:
            raise InjectedCrash(point)

    bus.subscribe(crash)
    store = LocalStore(root / "sessions")
    options = counted_options(ExecutionLog(root / "exec.log"), RequestLog(), crash_points=bus, out_dir=root / "out")
    with pytest.raises(InjectedCrash):
        run_workflow(spec, replace(options, force=True), store=store)  # its copies write their artifacts there too
    (session_id,) = store.session_ids()
    return store, session_id


def test_two_explorations_in_a_row_share_the_prepared_workflow_and_nothing_of_their_runs(tmp_path: Path) -> None:
    # both points lie before the planner's file_write calls, so each point's resume (to the end: `full`) writes its
    # files into its own copy of the tools' workspace; were anything of a run (the tools' environment, a resolver
    # holding its scratch directory) kept in the prepared workflow, the second point's files would land in the
    # first point's directories, and its workspace would not equal the golden run's
    golden = run_golden(ChaosTarget(WRITES_FILES, full=True), tmp_path / "golden")
    points = ["task:plan:planner/unit.before", "task:plan:planner/turn[0]/model.answered"]
    warm = [explore_point(golden, point, tmp_path / f"warm{n}") for n, point in enumerate(points)]
    prepared = golden.prepared_resume()
    assert prepared is not None and prepared is golden.prepared_resume()  # built once for the workflow
    golden.warm_resumes = False
    assert golden.prepared_resume() is None
    cold = [explore_point(golden, point, tmp_path / f"cold{n}") for n, point in enumerate(points)]
    for point, w, c in zip(points, warm, cold, strict=True):
        assert w.ok, w.describe()
        assert c.ok, c.describe()
        assert (w.fired, w.runs, w.converged_at, w.segment) == (c.fired, c.runs, c.converged_at, c.segment), point
    assert all(w.runs >= 1 for w in warm)


def test_each_warm_resume_takes_and_drops_the_lease_and_asks_its_own_models(tmp_path: Path) -> None:
    _, session_id = _crashed_at(tmp_path / "a", "step[1]:analyst/turn[0]/model.before")
    shutil.copytree(tmp_path / "a", tmp_path / "b")  # the same crash state, resumed cold there
    prepared = prepare(session_id, SPEC)
    held: list[bool] = []

    def try_to_open(point: CrashPoint) -> None:  # a second process resuming meanwhile is refused
        if point.site == "unit.before" and not held:
            with pytest.raises(SessionInUse):
                LocalStore(tmp_path / "a" / "sessions").open(session_id)
            held.append(True)

    runs = []
    for number, stop_at in enumerate(["step[2]:writer/turn[0]/model.before", None]):
        bus = CrashPoints()
        bus.subscribe(try_to_open)
        if stop_at is not None:
            bus.subscribe(lambda p, at=stop_at: (_ for _ in ()).throw(InjectedCrash(p)) if p.id == at else None)
        requests = RequestLog()
        options = counted_options(ExecutionLog(tmp_path / f"exec{number}.log"), requests, crash_points=bus)
        with contextlib.suppress(InjectedCrash):
            resume(session_id, options, store=LocalStore(tmp_path / "a" / "sessions"), prepared=prepared)
        runs.append(len(requests.digests))
        held.clear()
        LocalStore(tmp_path / "a" / "sessions").open(session_id).close()  # released by the crash, and by the end
    cold_requests = RequestLog()
    cold = counted_options(ExecutionLog(tmp_path / "cold.log"), cold_requests, crash_points=CrashPoints())
    resume(session_id, cold, store=LocalStore(tmp_path / "b" / "sessions"))
    # every warm resume's models answered to that resume's own request log, and together they asked what one
    # cold resume from the same crash state asks
    assert all(count > 0 for count in runs)
    assert sum(runs) == len(cold_requests.digests)
    warm_state = comparable(LocalStore(tmp_path / "a" / "sessions").load(session_id))
    assert first_difference(comparable(LocalStore(tmp_path / "b" / "sessions").load(session_id)), warm_state) is None


def test_a_prepared_workflow_serves_only_its_session_and_the_spec_bytes_it_was_created_from(tmp_path: Path) -> None:
    spec = tmp_path / "chain.strands.yaml"
    shutil.copy(SPEC, spec)
    store, session_id = _crashed_at(tmp_path, "step[0]:analyst/turn[0]/model.before", spec)
    meta = store.load(session_id).meta
    prepared = prepare(session_id, spec)
    assert prepared.serves(session_id, meta)
    assert not prepared.serves("0" * 8 + session_id[8:], meta)  # another session
    assert not prepared.serves(session_id, {**meta, "spec_path": str(SPEC)})  # created from another file
    # the spec file edited after the session was created: prepared from the new bytes, it does not serve the
    # session, whose resume reads the file and warns as a resume without a prepared workflow does
    spec.write_text(spec.read_text() + "# edited\n")
    prepared = prepare(session_id, spec)
    assert not prepared.serves(session_id, meta)
    reporter = RecordingReporter()
    options = counted_options(ExecutionLog(tmp_path / "exec2.log"), RequestLog(), reporter=reporter)
    assert resume(session_id, options, store=store, prepared=prepared).status == "completed"
    warnings = [call[1] for call in reporter.calls if call[0] == "warning"]
    assert any(w.startswith(SPEC_CHANGED_WARNING) for w in warnings), warnings


def test_a_warm_resume_looks_each_committed_unit_up_once_and_still_refuses_one_the_spec_does_not_name(
    tmp_path: Path,
) -> None:
    store, session_id = _crashed_at(tmp_path, "step[2]:writer/turn[0]/model.before")
    prepared = prepare(session_id, SPEC)
    state = store.load(session_id)
    assert {"step[0]", "step[1]"} <= set(state.units)
    check_committed_positions(prepared.spec, state, prepared.found_positions)
    assert {("step[0]", "analyst"), ("step[1]", "analyst")} <= prepared.found_positions  # remembered for the workflow
    check_committed_positions(prepared.spec, state, prepared.found_positions)  # and a second look finds the same
    renamed = copy_state(state)
    renamed.units["step[1]"] = {**renamed.units["step[1]"], "agent": "someone-else"}
    with pytest.raises(SpecError, match="committed step 1 ran agent 'someone-else'"):
        check_committed_positions(prepared.spec, renamed, prepared.found_positions)
    beyond = copy_state(state)
    beyond.units["step[9]"] = {"status": "completed", "agent": "writer"}
    with pytest.raises(SpecError, match="committed step 9 no longer exists"):
        check_committed_positions(prepared.spec, beyond, prepared.found_positions)
