"""The CLI's wording: help without raw types, counts in words, near-miss suggestions only, shell completion,
role names for orchestrator_workers units, and a word when `--hitl-response` has nothing to answer."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from strands_durable import LocalStore
from strands_durable.faults.soak import SoakResult
from tests.cli.support import CHAIN, session_ids_in
from tests.conftest import EXAMPLES

COMMANDS = [
    [],
    ["run"],
    ["validate"],
    ["chaos"],
    ["sessions"],
    *[["sessions", sub] for sub in ("list", "show", "delete", "cleanup", "export", "check", "repair")],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "strands")
def test_help_names_arguments_and_values_without_raw_types(strands, command):
    result = strands(*command, "--help")
    assert result.returncode == 0, result.stderr
    raw = re.findall(r"\{[A-Za-z_]+\}|<(?:str|int|path|float|list\[[^\]]*\])>", result.stdout)
    assert not raw, result.stdout


def test_sessions_show_usage_reads_id(strands):
    assert "sessions show [OPTIONS] ID\n" in strands("sessions", "show", "--help").stdout
    assert "chaos [OPTIONS] SPECS...\n" in strands("chaos", "--help").stdout


def test_an_unknown_flag_suggests_only_a_near_miss(strands, write_spec):
    bogus = strands("run", "--bogus")
    assert bogus.returncode == 2
    assert bogus.stderr.startswith("Error: No such option: --bogus (see ")
    assert "--out" not in bogus.stderr and "did you mean" not in bogus.stderr
    near = strands("run", "--fource", write_spec(CHAIN))
    assert near.returncode == 2
    assert "Error: No such option: --fource (did you mean --force?)" in near.stderr


def test_a_misspelt_spec_key_gets_a_did_you_mean(strands, write_spec):
    text = CHAIN.replace("name: tiny-chain", "name: tiny-chain\ndescriptionz: a typo")
    result = strands("validate", write_spec(text))
    assert result.returncode == 3
    assert result.stderr.strip().endswith("descriptionz: unknown key 'descriptionz' (did you mean 'description'?)")
    typo = strands("validate", write_spec(CHAIN.replace("    prompt:", "    promt:"), "typo.strands.yaml"))
    assert typo.returncode == 3
    assert "agents.writer.promt: unknown key 'promt' (did you mean 'prompt'?)" in typo.stderr


def test_validate_names_the_pattern_once(strands):
    result = strands("validate", EXAMPLES / "workflow-release-plan.strands.yaml")
    assert result.returncode == 0, result.stderr
    assert "workflow workflow" not in result.stdout
    assert result.stdout.rstrip().endswith("valid spec for workflow 'workflow-release-plan' (pattern: workflow)")


def test_shell_completion_installs_and_completes(tmp_path):
    program = str(Path(sys.executable).parent / "strands-durable")  # completion keys on the installed name
    # typer's own switch: the shell is named on the command line instead of detected from the parent processes
    env = {**os.environ, "HOME": str(tmp_path), "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    shown = subprocess.run([program, "--show-completion", "bash"], env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "complete " in shown.stdout and "_STRANDS_DURABLE_COMPLETE=complete_bash" in shown.stdout
    installed = subprocess.run([program, "--install-completion", "bash"], env=env, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    assert "strands-durable" in (tmp_path / ".bashrc").read_text() + "".join(
        p.read_text() for p in tmp_path.rglob("*.sh")
    )
    words = {
        "_STRANDS_DURABLE_COMPLETE": "complete_bash",
        "COMP_WORDS": "strands-durable sessions sh",
        "COMP_CWORD": "2",
    }
    completed = subprocess.run([program], env={**env, **words}, capture_output=True, text=True)
    assert completed.stdout.split() == ["show"], completed


def _completions(words: str, tmp_path: Path, sessions: Path) -> list[str]:
    """What bash completion offers for the last word of `words` (typer's protocol, as the installed script asks)."""
    program = str(Path(sys.executable).parent / "strands-durable")
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1",
        "STRANDS_SESSIONS_DIR": str(sessions),
        "_STRANDS_DURABLE_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
    }
    completed = subprocess.run([program], env=env, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0 and completed.stderr == "", completed
    return completed.stdout.split()


def test_shell_completion_completes_session_ids(tmp_path, store, sessions_dir):
    from tests.cli.support import make_session

    first = make_session(store, session_id="aaaa1111-0000-4000-8000-000000000001")
    second = make_session(store, session_id="aaaa2222-0000-4000-8000-000000000002")
    other = make_session(store, session_id="expenses-1")
    for session in (first, second, other):
        session.close()
    every = sorted(s.state.session_id for s in (first, second, other))
    assert _completions("strands-durable sessions show ", tmp_path, sessions_dir) == every
    assert _completions("strands-durable sessions show aaaa2", tmp_path, sessions_dir) == [second.state.session_id]
    assert _completions("strands-durable run --resume exp", tmp_path, sessions_dir) == ["expenses-1"]
    for command in ("delete", "export", "check", "repair"):
        assert _completions(f"strands-durable sessions {command} aaaa", tmp_path, sessions_dir) == every[:2]
    elsewhere = tmp_path / "elsewhere"
    moved = make_session(LocalStore(elsewhere), session_id="moved-1")
    moved.close()
    words = f"strands-durable sessions show --sessions-dir {elsewhere} "
    assert _completions(words, tmp_path, sessions_dir) == ["moved-1"]


def test_strands_help_and_sessions_help_describe_sessions_alike(strands):
    entry = re.search(r"^  sessions\s+(.+(?:\n {4,}\S.*)*)", strands("--help").stdout, re.M)[1]
    listed = " ".join(entry.split())  # the listing wraps long descriptions onto indented lines
    own = " ".join(strands("sessions", "--help").stdout.split("\n\n")[1].split())
    assert listed == own
    assert not listed.endswith("...")
    for name in ("List", "show", "export", "check", "repair", "delete", "clean up"):
        assert name in listed


def test_a_closed_stdout_during_help_exits_141_without_a_traceback(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "strands_durable"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # like `strands | head -0`: the help it prints goes nowhere
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and "Traceback" not in err, err


def test_orchestrator_units_are_named_by_role(strands):
    result = strands("run", EXAMPLES / "orchestrator-workers-survey.strands.yaml")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "Planner (round 1): planner - COMPLETE" in "\n".join(lines)
    assert any(re.match(r"Worker 1/\d \(round 1\): worker - COMPLETE \(\d+ tokens\)", line) for line in lines)
    assert any(line.startswith("Reducer: reducer - COMPLETE") for line in lines)
    assert any(line.startswith("Writer: writer - COMPLETE") for line in lines)
    assert not any(line.startswith("Step 1:") for line in lines), lines


def test_counts_are_singular_for_one():
    result = SoakResult(["a.strands.yaml"], ["kill"], seed=0, budget_s=10.0, rounds=1)
    assert result.summary_lines()[0].startswith("strands chaos: 1 workflow, 1 fault class, 1 round in ")
    two = SoakResult(["a", "b"], ["kill", "disk"], seed=0, budget_s=10.0, rounds=2)
    assert two.summary_lines()[0].startswith("strands chaos: 2 workflows, 2 fault classes, 2 rounds in ")


def test_cleanup_of_one_session_says_one_session(strands, write_spec):
    assert strands("run", write_spec(CHAIN)).returncode == 0
    result = strands("sessions", "cleanup", "--older-than", "0s", "--force")
    assert result.returncode == 0, result.stderr
    assert "✓ Deleted 1 session\n" in result.stdout


@pytest.mark.slow
def test_hitl_response_for_a_session_not_waiting_for_one_is_ignored_with_a_warning(child, strands, write_spec):
    run = child("run", write_spec(CHAIN), env={"STRANDS_SYNTHETIC_LATENCY_MS": "300"})
    run.wait_for("Step 1/3: writer - EXECUTING")
    run.proc.send_signal(signal.SIGINT)
    assert run.finish() == 130
    session_id = session_ids_in("\n".join(run.out))[0]
    resumed = strands("run", "--resume", session_id, "--hitl-response", "yes")
    assert resumed.returncode == 0, resumed.stderr
    assert (
        f"--hitl-response is ignored: session {session_id[:8]}... is not waiting for a human answer" in resumed.stderr
    )
