"""Resume from disk after real and injected deaths: SIGKILL mid-tool, non-idempotent tools, spec changes."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from strands_durable import CrashPoints, InjectedCrash, LocalStore, RunOptions, resume, run_workflow
from strands_durable.crashpoints import CrashPoint
from strands_durable.errors import SessionCompleted, SpecError
from strands_durable.faults.kit.judge import outcome_unknown
from strands_durable.faults.kit.oracle import RequestLog, comparable, first_difference, stored_violations
from strands_durable.history import SYNTHESIZED_RESULT_TEXT, synthesized_ids
from strands_durable.runner.reporter import RecordingReporter
from tests.conftest import REPO
from tests.core.support import ExecutionLog, counted_options, counting_tools

SPEC = Path(__file__).parent / "specs" / "chain-tools.strands.yaml"


def _golden(root: Path) -> dict:
    store = LocalStore(root / "sessions")
    outcome = run_workflow(
        SPEC, counted_options(ExecutionLog(root / "exec.log"), RequestLog(), out_dir=root / "out"), store=store
    )
    return comparable(store.load(outcome.session_id))


@pytest.mark.slow
def test_sigkill_while_a_tool_runs_then_resume_from_disk_is_identical(tmp_path: Path) -> None:
    golden = _golden(tmp_path / "golden")
    root = tmp_path / "killed"
    root.mkdir()
    marker, exec_log = root / "ready", root / "exec.log"
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.core.kill_child",
            str(SPEC),
            str(root / "sessions"),
            str(root / "out"),
            str(marker),
            str(exec_log),
        ],
        cwd=REPO,
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert child.poll() is None, "the child exited before its tool ran"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL
    store = LocalStore(root / "sessions", strict=True)
    (session_id,) = store.session_ids()
    crashed = store.load(session_id)
    assert crashed.status == "running"
    assert [s.display_status for s in store.list()] == ["running (stale)"]
    assert stored_violations(crashed) == []
    log = ExecutionLog(exec_log)
    outcome = resume(session_id, counted_options(log, RequestLog()), store=store)
    assert outcome.status == "completed"
    assert first_difference(golden, comparable(store.load(session_id))) is None
    # the tool that was killed mid-call ran again (its result was never committed); nothing else did
    assert sorted(log.counts().values())[-1] == 2
    assert sum(1 for c in log.counts().values() if c == 2) == 1


SCRIPTS = {
    "analyst": [
        {
            "tool_calls": [
                {"name": "send_email", "input": {"to": "ops@example.com", "body": "fsync facts"}},
                {"name": "calculator", "input": {"expression": "6*7"}},
            ]
        },
        "Sent the facts; 6*7 is 42.",
        "Checked.",
        "Reviewed.",
    ],
    "writer": ["A short summary."],
}


def _scripted(log: ExecutionLog, **kwargs) -> RunOptions:
    return RunOptions(provider="scripted", scripts=SCRIPTS, extra_tools=counting_tools(log), **kwargs)


def _crash_at(site_suffix: str) -> CrashPoints:
    points = CrashPoints()

    def crash(point: CrashPoint) -> None:
        if point.id.endswith(site_suffix):
            raise InjectedCrash(point)

    points.subscribe(crash)
    return points


def test_a_non_idempotent_tool_that_ran_but_did_not_commit_is_never_run_again(tmp_path: Path) -> None:
    log = ExecutionLog(tmp_path / "exec.log")
    store = LocalStore(tmp_path / "sessions", strict=True)
    with pytest.raises(InjectedCrash):
        run_workflow(
            SPEC,
            _scripted(log, out_dir=tmp_path / "out", crash_points=_crash_at("tool[0]:send_email/tool.executed")),
            store=store,
        )
    assert [e["tool"] for e in log.entries()] == ["send_email"]
    (session_id,) = store.session_ids()
    outcome = resume(session_id, _scripted(log), store=LocalStore(tmp_path / "sessions", strict=True))
    assert outcome.status == "completed"
    assert [e["tool"] for e in log.entries()] == ["send_email", "calculator"]
    messages = store.load(session_id).conversations["analyst"].messages
    results = [b["toolResult"] for b in messages[2]["content"]]
    assert results[0]["status"] == "error" and results[0]["content"] == [{"text": SYNTHESIZED_RESULT_TEXT}]
    assert messages[2]["metadata"]["strands_durable"]["synthesized_tool_results"] == [results[0]["toolUseId"]]
    assert outcome_unknown(store.load(session_id)) == {results[0]["toolUseId"]}
    assert results[1]["status"] == "success" and results[1]["content"] == [{"text": "42"}]
    assert all(m["role"] != messages[i - 1]["role"] for i, m in enumerate(messages) if i)


def test_a_committed_non_idempotent_result_is_replayed_not_synthesized(tmp_path: Path) -> None:
    log = ExecutionLog(tmp_path / "exec.log")
    store = LocalStore(tmp_path / "sessions", strict=True)
    with pytest.raises(InjectedCrash):
        run_workflow(
            SPEC,
            _scripted(log, out_dir=tmp_path / "out", crash_points=_crash_at("tool[1]:calculator/tool.before")),
            store=store,
        )
    (session_id,) = store.session_ids()
    resume(session_id, _scripted(log), store=store)
    assert [e["tool"] for e in log.entries()] == ["send_email", "calculator"]
    messages = store.load(session_id).conversations["analyst"].messages
    assert messages[2]["content"][0]["toolResult"]["content"] == [{"text": "sent to ops@example.com"}]
    assert "synthesized_tool_results" not in messages[2].get("metadata", {}).get("strands_durable", {})
    assert outcome_unknown(store.load(session_id)) == set()


def test_a_non_idempotent_tool_that_ran_carries_no_synthesized_marker(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "sessions", strict=True)
    run_workflow(SPEC, _scripted(ExecutionLog(tmp_path / "exec.log"), out_dir=tmp_path / "out"), store=store)
    (session_id,) = store.session_ids()
    messages = store.load(session_id).conversations["analyst"].messages
    assert messages[2]["content"][0]["toolResult"]["content"] == [{"text": "sent to ops@example.com"}]
    assert not any(synthesized_ids(m) for m in messages)
    assert outcome_unknown(store.load(session_id)) == set()


def test_tokens_accumulate_across_resumes_and_a_completed_session_is_refused(tmp_path: Path) -> None:
    golden_store = LocalStore(tmp_path / "golden")
    golden = run_workflow(
        SPEC, _scripted(ExecutionLog(tmp_path / "g.log"), out_dir=tmp_path / "gout"), store=golden_store
    )
    store, session_id = _paused_session(tmp_path, SPEC)
    before = store.load(session_id).usage()["total"]
    reporter = RecordingReporter()
    outcome = resume(session_id, _scripted(ExecutionLog(tmp_path / "e.log"), reporter=reporter), store=store)
    assert 0 < before < golden.usage["total"]
    assert outcome.tokens_before == before
    assert outcome.usage == golden.usage
    assert ("finished", "completed", before, golden.usage["total"]) in reporter.calls
    assert [c[1] for c in reporter.calls if c[0] == "unit_skipped"] == [0, 1]
    with pytest.raises(SessionCompleted):
        resume(session_id, _scripted(ExecutionLog(tmp_path / "e.log")), store=store)


def _paused_session(tmp_path: Path, spec: Path) -> tuple[LocalStore, str]:
    store = LocalStore(tmp_path / "sessions")
    with pytest.raises(InjectedCrash):
        run_workflow(
            spec,
            _scripted(
                ExecutionLog(tmp_path / "e.log"),
                out_dir=tmp_path / "out",
                crash_points=_crash_at("step[2]:writer/unit.before"),
            ),
            store=store,
        )
    return store, store.session_ids()[0]


def test_resume_warns_when_the_spec_changed_and_runs_the_changed_file(tmp_path: Path) -> None:
    spec = tmp_path / "flow.strands.yaml"
    shutil.copy(SPEC, spec)
    store, session_id = _paused_session(tmp_path, spec)
    spec.write_text(spec.read_text().replace("Summarise:", "Summarise briefly:"))
    reporter = RecordingReporter()
    resume(
        session_id, _scripted(ExecutionLog(tmp_path / "e.log"), reporter=reporter, cli_vars=["topic=x"]), store=store
    )
    warnings = [c[1] for c in reporter.calls if c[0] == "warning"]
    assert any(w.startswith("--var is ignored") for w in warnings)
    changed = next(w for w in warnings if "Spec file has changed" in w).splitlines()
    assert changed[0] == "⚠ Warning: Spec file has changed since session creation"
    assert changed[1].strip().startswith("Original: ") and changed[2].strip().startswith("Current: ")
    assert changed[3].strip() == "Continuing with execution..."
    writer = store.load(session_id).conversations["writer"].messages
    assert writer[0]["content"][0]["text"].startswith("Summarise briefly:")
    assert store.load(session_id).meta["variables"] == {"topic": "fsync"}


def test_resume_runs_the_snapshot_when_the_spec_file_is_gone(tmp_path: Path) -> None:
    spec = tmp_path / "flow.strands.yaml"
    shutil.copy(SPEC, spec)
    store, session_id = _paused_session(tmp_path, spec)
    spec.unlink()
    reporter = RecordingReporter()
    outcome = resume(session_id, _scripted(ExecutionLog(tmp_path / "e.log"), reporter=reporter), store=store)
    assert outcome.status == "completed"
    assert any("spec_snapshot.yaml" in c[1] for c in reporter.calls if c[0] == "warning")


def test_resume_refuses_a_spec_whose_committed_step_was_renamed(tmp_path: Path) -> None:
    spec = tmp_path / "flow.strands.yaml"
    shutil.copy(SPEC, spec)
    store, session_id = _paused_session(tmp_path, spec)
    spec.write_text(spec.read_text().replace("analyst", "auditor"))
    with pytest.raises(SpecError) as caught:
        resume(session_id, _scripted(ExecutionLog(tmp_path / "e.log")), store=store)
    assert "analyst" in str(caught.value)
    assert store.load(session_id).status == "running"


def test_resume_refuses_a_workflow_whose_committed_task_was_renamed(tmp_path: Path) -> None:
    spec = tmp_path / "release.strands.yaml"
    shutil.copy(REPO / "examples" / "workflow-release-plan.strands.yaml", spec)
    store = LocalStore(tmp_path / "sessions")
    with pytest.raises(InjectedCrash):
        run_workflow(
            spec,
            RunOptions(out_dir=tmp_path / "out", crash_points=_crash_at("task:plan:planner/unit.before")),
            store=store,
        )
    (session_id,) = store.session_ids()
    assert {"task:research", "task:risks"} <= set(store.load(session_id).units)
    spec.write_text(
        spec.read_text()
        .replace("id: risks", "id: hazards")
        .replace("[research, risks]", "[research, hazards]")
        .replace("tasks.risks.", "tasks.hazards.")
    )
    with pytest.raises(SpecError) as caught:
        resume(session_id, RunOptions(), store=store)
    assert "task:risks" in str(caught.value)
