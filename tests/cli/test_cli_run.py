"""`strands run` and `strands run --resume` through real subprocesses: lines, streams and exit codes."""

from __future__ import annotations

import json
import re

import pytest

from tests.cli.support import CHAIN, HITL_CHAIN, session_ids_in
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow


def test_run_prints_the_documents_lines_and_writes_artifacts(strands, tmp_path):
    result = strands("run", EXAMPLES / "chain-research.strands.yaml", "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"Session ID: [0-9a-f-]{36}", lines[0])
    assert lines[1] == "Running workflow: chain-research"
    completes = [line for line in lines if "COMPLETE" in line]
    assert [re.sub(r"\(\d+ tokens\)", "(N tokens)", line) for line in completes] == [
        "Step 1/3: researcher - COMPLETE (N tokens)",
        "Step 2/3: researcher - COMPLETE (N tokens)",
        "Step 3/3: writer - COMPLETE (N tokens)",
    ]
    assert "✓ Workflow complete" in lines
    assert re.search(r"^Total tokens: \d+$", result.stdout, re.M)
    assert (tmp_path / "out" / "durable-agent-workflows-report.md").is_file()
    assert result.stderr == ""


def test_run_json_puts_one_document_on_stdout_and_messages_on_stderr(strands, write_spec):
    result = strands("run", write_spec(CHAIN), "--json", "--var", "topic=reefs")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["status"] == "completed" and document["exit_code"] == 0
    assert document["usage"]["total"] > 0 and document["last_response"]
    assert f"Session ID: {document['session_id']}" in result.stderr
    assert "Step 3/3: writer - COMPLETE" in result.stderr


def test_var_sets_the_variable_recorded_in_the_session(strands, write_spec):
    run = strands("run", write_spec(CHAIN), "--var", "topic=reefs", "--seed", "7")
    assert run.returncode == 0, run.stderr
    session_id = session_ids_in(run.stdout)[0]
    shown = json.loads(strands("sessions", "show", session_id, "--json").stdout)
    assert shown["session"]["variables"] == {"topic": "reefs"}
    assert shown["session"]["runtime"]["seed"] == 7


def test_no_save_session_leaves_nothing_on_disk(strands, write_spec, sessions_dir):
    result = strands("run", write_spec(CHAIN), "--no-save-session")
    assert result.returncode == 0, result.stderr
    assert "✓ Workflow complete" in result.stdout
    assert not sessions_dir.exists() or not any(sessions_dir.iterdir())


def test_sessions_dir_flag_overrides_the_environment(strands, write_spec, tmp_path, sessions_dir):
    other = tmp_path / "elsewhere"
    result = strands("run", write_spec(CHAIN), "--sessions-dir", other)
    assert result.returncode == 0, result.stderr
    session_id = session_ids_in(result.stdout)[0]
    assert (other / f"session_{session_id}" / "journal.log").is_file()
    assert not (sessions_dir / f"session_{session_id}").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "needs a SPEC file, or --resume ID"),
        (("--auto-resume",), "--auto-resume needs a SPEC file"),
        (("--resume", "0123456789", "--no-save-session"), "--no-save-session cannot resume"),
    ],
)
def test_bad_flag_combinations_exit_2_with_one_line(strands, args, message):
    result = strands("run", *args)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ")
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_spec_and_resume_together_is_a_usage_error(strands, write_spec):
    result = strands("run", write_spec(CHAIN), "--resume", "0123456789")
    assert result.returncode == 2
    assert "either a SPEC file or --resume ID" in result.stderr


def test_missing_and_invalid_specs_exit_3(strands, write_spec):
    missing = strands("run", "nope.yaml")
    assert missing.returncode == 3
    assert missing.stderr == "Error: nope.yaml: no such file\n"
    bad = strands("run", write_spec(CHAIN.replace("- agent: writer", "- agent: ghost", 1), "bad.yaml"))
    assert bad.returncode == 3
    assert len(bad.stderr.splitlines()) == 1 and "unknown agent 'ghost'" in bad.stderr
    assert bad.stdout == ""


def test_debug_shows_the_traceback(strands):
    result = strands("run", "nope.yaml", "--debug")
    assert result.returncode == 3
    assert "Traceback" in result.stderr and result.stderr.rstrip().endswith("Error: nope.yaml: no such file")


def test_missing_credentials_exit_10_suggesting_the_synthetic_provider_and_leave_no_session(strands, write_spec):
    for _ in range(2):
        result = strands("run", write_spec(CHAIN), "--provider", "openai", env={"OPENAI_API_KEY": None})
        assert result.returncode == 10, result.stderr
        error = result.stderr.splitlines()
        assert len(error) == 1 and "OPENAI_API_KEY" in error[0] and "--provider synthetic" in error[0]
        assert result.stdout == ""
    assert strands("sessions", "list").stdout == "No sessions found.\n"


def test_a_missing_provider_package_exits_18_naming_the_extra_and_leaves_no_session(strands, write_spec, tmp_path):
    missing = tmp_path / "without-anthropic"  # shadows an installed anthropic package with one that is not there
    missing.mkdir()
    (missing / "anthropic.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'anthropic'\", name='anthropic')\n", encoding="utf-8"
    )
    spec = write_spec(CHAIN.replace("provider: synthetic", "provider: anthropic"))
    for _ in range(2):
        result = strands("run", spec, env={"PYTHONPATH": str(missing), "ANTHROPIC_API_KEY": "k"})
        assert result.returncode == 18, result.stderr
        assert result.stderr.splitlines() == [
            "Error: provider 'anthropic' needs the anthropic package: in the strands-durable checkout run "
            "pip install -e '.[anthropic]' (the package is not on PyPI yet)"
        ]
    assert strands("sessions", "list").stdout == "No sessions found.\n"


@pytest.mark.parametrize(
    ("ident", "message"),
    [
        ("01234567-89ab-4def-8123-456789abcdef", "Error: Session not found: 01234567-89ab-4def-8123-456789abcdef"),
        ("0123456789", "Error: Session not found: 0123456789"),
        ("0123", "Error: Session id prefix too short: 0123"),
        ("../etc", "Error: Not a session id"),
    ],
)
def test_resume_of_an_unknown_session_exits_2(strands, ident, message):
    result = strands("run", "--resume", ident)
    assert result.returncode == 2
    assert result.stderr.startswith(message) and len(result.stderr.splitlines()) == 1


def test_resume_of_a_completed_session_exits_2(strands, write_spec):
    session_id = session_ids_in(strands("run", write_spec(CHAIN)).stdout)[0]
    result = strands("run", "--resume", session_id[:8])
    assert result.returncode == 2
    assert result.stderr == f"Error: Session already completed: {session_id}\n"


def test_resume_of_a_session_held_by_a_live_process_exits_17(strands, store):
    from tests.cli.support import make_session

    with make_session(store) as held:
        result = strands("run", "--resume", held.state.session_id)
    assert result.returncode == 17
    assert re.fullmatch(rf"Error: Session {held.state.session_id} is in use by pid \d+ on host \S+\n", result.stderr), (
        result.stderr
    )


def test_hitl_pause_exits_19_then_resume_answers_and_completes(strands, write_spec):
    spec = write_spec(HITL_CHAIN)
    paused = strands("run", spec)
    assert paused.returncode == 19, paused.stderr
    session_id = session_ids_in(paused.stdout)[0]
    assert "⏸ Paused for human input at step[1]" in paused.stdout
    assert "Prompt: Approve the plan?" in paused.stdout
    assert "Context:\nPlan: " in paused.stdout
    assert f'Resume with: strands run --resume {session_id} --hitl-response "<your answer>"' in paused.stdout
    assert json.loads(strands("sessions", "list", "--json").stdout)[0]["display_status"] == "paused (hitl)"

    resumed = strands("run", "--resume", session_id, "--hitl-response", "approved", "--var", "x=1")
    assert resumed.returncode == 0, resumed.stderr
    lines = resumed.stdout.splitlines()
    assert lines[0] == f"Resuming session: {session_id[:8]}..."
    assert "Skipping completed step 0: writer" in lines
    assert "Executing step 2: writer" in lines
    assert "Step 3/3: writer - EXECUTING" in lines
    assert "✓ Workflow complete" in lines
    total = re.search(r"^Total tokens: (\d+) \((\d+) from resumed session \+ (\d+) new\)$", resumed.stdout, re.M)
    assert total and int(total[1]) == int(total[2]) + int(total[3]) and int(total[2]) > 0 and int(total[3]) > 0
    assert "--var is ignored with --resume" in resumed.stderr
    exported = json.loads(strands("sessions", "export", session_id).stdout)
    assert exported["outputs"]["units"]["step[1]"] == "approved"


def test_resume_after_a_spec_change_prints_the_four_warning_lines(strands, write_spec):
    spec = write_spec(HITL_CHAIN)
    session_id = session_ids_in(strands("run", spec).stdout)[0]
    spec.write_text(HITL_CHAIN.replace("Revise with", "Revise carefully with"), encoding="utf-8")
    resumed = strands("run", "--resume", session_id, "--hitl-response", "ok", "--provider", "openai")
    assert resumed.returncode == 0, resumed.stderr
    warning = resumed.stderr.splitlines()
    start = warning.index("⚠ Warning: Spec file has changed since session creation")
    assert re.fullmatch(r"  Original: [0-9a-f]{8}\.\.\.", warning[start + 1])
    assert re.fullmatch(r"  Current: [0-9a-f]{8}\.\.\.", warning[start + 2])
    assert warning[start + 3] == "  Continuing with execution..."
    assert "--provider is ignored with --resume" in resumed.stderr


def test_auto_resume_continues_the_newest_unfinished_session_else_starts_fresh(strands, write_spec):
    spec = write_spec(HITL_CHAIN)
    fresh = strands("run", spec, "--auto-resume")
    assert fresh.returncode == 19
    assert "No unfinished session of this spec" in fresh.stderr
    session_id = session_ids_in(fresh.stdout)[0]
    resumed = strands("run", spec, "--auto-resume", "--hitl-response", "fine")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.startswith(f"Resuming session: {session_id[:8]}...")
    again = strands("run", spec, "--auto-resume", "--hitl-response", "fine")
    assert again.returncode == 0, again.stderr  # a fresh run; --hitl-response answers its pause
    assert again.stdout.startswith("Session ID: ") and session_id not in again.stdout


def test_retention_removes_old_sessions_after_a_run_but_keeps_the_new_one(strands, write_spec):
    spec = write_spec(CHAIN)
    old = session_ids_in(strands("run", spec).stdout)[0]
    result = strands("run", spec, env={"STRANDS_SESSIONS_RETENTION": "0s"})
    assert result.returncode == 0, result.stderr
    new = session_ids_in(result.stdout)[0]
    assert "Removed 1 session older than 0s (STRANDS_SESSIONS_RETENTION)" in result.stderr
    listed = [s["session_id"] for s in json.loads(strands("sessions", "list", "--json").stdout)]
    assert listed == [new] and old not in listed


def test_a_bad_retention_value_fails_before_running(strands, write_spec, sessions_dir):
    result = strands("run", write_spec(CHAIN), env={"STRANDS_SESSIONS_RETENTION": "soon"})
    assert result.returncode == 2
    assert (
        result.stderr == "Error: STRANDS_SESSIONS_RETENTION: not a duration: 'soon' (use a number and a unit: "
        "30m, 12h, 7d, 2w)\n"
    )
    assert not sessions_dir.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "--bogus"), "Error: No such option: --bogus"),
        (("run", "--seed", "many", "x.yaml"), "Error: Invalid value for '--seed'"),
        (("sessions", "show"), "Error: Missing argument 'ID'."),
        (("launch",), "Error: No such command 'launch'."),
    ],
)
def test_flag_and_argument_errors_are_one_line_with_exit_2(strands, args, message):
    result = strands(*args)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(message) and lines[0].endswith(" --help')")
    assert result.stdout == ""


def test_bare_group_prints_its_help(strands):
    result = strands("sessions")
    assert result.returncode == 0
    assert result.stdout.startswith("Usage: ") and "cleanup" in result.stdout and "repair" in result.stdout
