"""Stopping a run: a Ctrl+C during a slow model call cancels the call in flight, a second Ctrl+C on a terminal
restores it and says how to resume, and a closed stdout (`strands run spec | head -1`) stops like SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.cli.support import wait_for_nap
from tests.cli.terminal import Terminal
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow

SPEC = EXAMPLES / "chain-research.strands.yaml"
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def _session(strands, session_id: str) -> dict:
    return json.loads(strands("sessions", "export", session_id).stdout)


def _resumes_to_the_end(strands, session_id: str) -> None:
    resumed = strands("run", "--resume", session_id)
    assert resumed.returncode == 0, resumed.stderr
    assert "✓ Workflow complete" in resumed.stdout
    assert strands("sessions", "check", session_id).returncode == 0


def test_first_ctrl_c_cancels_a_slow_model_call_and_stops_within_a_second(child, strands, sessions_dir):
    run = child("run", SPEC, env={"STRANDS_SYNTHETIC_LATENCY_MS": "8000"})
    run.wait_for("Step 1/3: researcher - EXECUTING")
    time.sleep(0.5)  # the first model call is now in flight for 7.5 more seconds
    sent = time.monotonic()
    run.proc.send_signal(signal.SIGINT)
    assert run.finish(timeout=30) == 130
    # the call had 7.5 s to go; the bound leaves room for a loaded machine's process exit (the cancel itself
    # takes well under a second: tests/models/test_cancel_in_flight.py)
    assert time.monotonic() - sent < 3.0, "the model call in flight was waited for, not cancelled"
    assert any("a model call in flight is cancelled (not committed, the resume asks again)" in x for x in run.err)
    session_id = re.fullmatch(r"Session ID: (\S+)", run.out[0])[1]
    exported = _session(strands, session_id)
    assert exported["session"]["status"] == "paused"
    texts = json.dumps(exported["agents"])
    assert "Cancelled by user" not in texts and "cancelled" not in texts.lower()
    for path in sessions_dir.rglob("*"):  # nor in any stored file (the journal included)
        if path.is_file():
            assert b"Cancelled by user" not in path.read_bytes(), path
    _resumes_to_the_end(strands, session_id)


def test_closed_stdout_stops_like_sigterm_with_exit_141_and_the_resume_command_on_stderr(tmp_path, strands):
    env = {**os.environ, "STRANDS_SYNTHETIC_LATENCY_MS": "300"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "strands_durable", "run", str(SPEC)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    first = proc.stdout.readline().decode()  # what `| head -1` reads before it exits
    proc.stdout.close()
    code = proc.wait(timeout=60)
    err = proc.stderr.read().decode()
    session_id = re.fullmatch(r"Session ID: (\S+)\n", first)[1]
    assert code == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err
    assert f"Interrupted (stdout closed): session {session_id} paused at a safe point" in err
    assert err.splitlines()[-1] == f"Resume with: strands run --resume {session_id}"
    state = json.loads(strands("sessions", "show", session_id, "--json").stdout)["session"]
    assert (state["status"], state["status_reason"]) == ("paused", "interrupted")
    _resumes_to_the_end(strands, session_id)


def _spinner_or_executing(lines: list[str]) -> list[str]:
    return [line for line in lines if "EXECUTING" in line or any(ch in line for ch in SPINNER)]


def test_ctrl_c_on_a_terminal_leaves_no_spinner_frame_behind(tmp_path, strands):
    term = Terminal("run", str(SPEC), cwd=tmp_path, env={"STRANDS_SYNTHETIC_LATENCY_MS": "8000"})
    try:
        term.wait_for("EXECUTING")
        time.sleep(0.5)
        term.press_ctrl_c()
        assert term.finish() == 130
    finally:
        term.kill()
    lines = term.lines()
    assert not _spinner_or_executing(lines), "\n".join(lines)
    assert any(line.startswith("Ctrl+C received: stopping now") for line in lines), "\n".join(lines)
    assert re.match(r"Resume with: strands run --resume \S+$", lines[-1]), "\n".join(lines)
    assert not term.screen.cursor.hidden


def test_second_ctrl_c_on_a_terminal_restores_the_cursor_and_prints_the_resume_command(tmp_path, strands, nap_spec):
    term = Terminal("run", str(nap_spec), cwd=tmp_path, env={})
    try:
        term.wait_for("EXECUTING")
        wait_for_nap(nap_spec)  # the nap tool runs: the first Ctrl+C has to wait for it
        term.press_ctrl_c()
        term.wait_for("received: stopping now")
        term.press_ctrl_c()
        assert term.finish() == 130
    finally:
        term.kill()
    lines = term.lines()
    assert b"\x1b[?25l" in term.raw, "the live display was not used"
    assert not term.screen.cursor.hidden, "the cursor is still hidden"
    assert not _spinner_or_executing(lines), "\n".join(lines)
    session_id = re.search(r"Session ID: (\S+)", "\n".join(lines))[1]
    assert f"Aborted (Ctrl+C twice): session {session_id} keeps everything committed so far" in lines
    assert lines[-1] == f"Resume with: strands run --resume {session_id}"
    resumed = strands("run", "--resume", session_id)
    assert resumed.returncode == 0, resumed.stderr


def test_sigterm_notice_does_not_offer_ctrl_c(child, nap_spec):
    run = child("run", nap_spec)
    run.wait_for("EXECUTING")
    run.proc.send_signal(signal.SIGTERM)
    assert run.finish() == 143
    notice = "\n".join(run.err)
    assert "SIGTERM received: stopping now" in notice and "Ctrl+C" not in notice, notice
    assert "a second SIGTERM aborts at once" in notice
