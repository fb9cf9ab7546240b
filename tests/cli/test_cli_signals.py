"""Ctrl+C and SIGTERM sent to a running `strands run` child: stop at a safe point, exit 130/143, resume to the end.

The synthetic model is slowed down (STRANDS_SYNTHETIC_LATENCY_MS) so that the signal lands mid-run; the test
waits for the child's `Step 1/3` line before sending it.
"""

from __future__ import annotations

import json
import re
import signal

import pytest

from tests.cli.support import wait_for_nap
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow

SLOW = {"STRANDS_SYNTHETIC_LATENCY_MS": "300"}
SPEC = EXAMPLES / "chain-research.strands.yaml"


def _status(strands, session_id: str) -> dict:
    return json.loads(strands("sessions", "show", session_id, "--json").stdout)["session"]


def _resume_to_completion(strands, session_id: str, tmp_path) -> None:
    resumed = strands("run", "--resume", session_id[:8])
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.startswith(f"Resuming session: {session_id[:8]}...")
    assert "✓ Workflow complete" in resumed.stdout
    assert _status(strands, session_id)["status"] == "completed"
    assert (tmp_path / "artifacts" / "durable-agent-workflows-report.md").is_file()
    check = strands("sessions", "check", session_id)
    assert check.returncode == 0, check.stdout


@pytest.mark.parametrize(("signum", "code", "name"), [(signal.SIGINT, 130, "Ctrl+C"), (signal.SIGTERM, 143, "SIGTERM")])
def test_signal_stops_at_a_safe_point_then_resume_completes(child, strands, tmp_path, signum, code, name):
    run = child("run", SPEC, env=SLOW)
    run.wait_for("Step 1/3")
    run.proc.send_signal(signum)
    assert run.finish() == code, (run.out, run.err)
    session_id = re.fullmatch(r"Session ID: (\S+)", run.out[0])[1]
    notice = next(line for line in run.err if "received: stopping now" in line)
    assert notice.startswith(f"{name} received: stopping now; a model call in flight is cancelled")
    again = "Ctrl+C again aborts at once" if name == "Ctrl+C" else "a second SIGTERM aborts at once"
    assert notice.endswith(f"({again})") and ("Ctrl+C" in notice) == (name == "Ctrl+C"), notice
    assert f"Interrupted ({name}): session {session_id} paused at a safe point" in run.err
    assert run.err[-1] == f"Resume with: strands run --resume {session_id}"
    assert not any("Traceback" in line for line in run.err)
    state = _status(strands, session_id)
    assert (state["status"], state["status_reason"]) == ("paused", "interrupted")
    _resume_to_completion(strands, session_id, tmp_path)


def test_second_ctrl_c_aborts_at_once_and_the_session_stays_resumable(child, strands, tmp_path, nap_spec):
    run = child("run", nap_spec)
    run.wait_for("Step 1/2: sleeper - EXECUTING")
    wait_for_nap(nap_spec)
    run.proc.send_signal(signal.SIGINT)  # the nap tool is running: the stop waits for it
    run.wait_for("received: stopping now")
    run.proc.send_signal(signal.SIGINT)
    assert run.finish(timeout=5) == 130
    assert not any("Interrupted" in line for line in run.out + run.err)
    session_id = re.fullmatch(r"Session ID: (\S+)", run.out[0])[1]
    assert f"Aborted (Ctrl+C twice): session {session_id} keeps everything committed so far" in run.err
    assert run.err[-1] == f"Resume with: strands run --resume {session_id}"
    listed = json.loads(strands("sessions", "list", "--json").stdout)
    assert [(s["session_id"], s["display_status"]) for s in listed] == [(session_id, "running (stale)")]
    table = strands("sessions", "list").stdout
    assert re.search(rf"^{session_id}\s+napping\s+chain\s+running \(stale\)\s", table, re.M), table
    resumed = strands("run", "--resume", session_id)
    assert resumed.returncode == 0, resumed.stderr
    assert strands("sessions", "check", session_id).returncode == 0


def test_ctrl_c_while_a_tool_runs_names_the_tool_it_waits_for(child, strands, tmp_path, nap_spec):
    run = child("run", nap_spec)
    run.wait_for("Step 1/2: sleeper - EXECUTING")
    wait_for_nap(nap_spec)
    run.proc.send_signal(signal.SIGINT)
    assert run.finish() == 130, (run.out, run.err)
    notice = next(line for line in run.err if "received: stopping now" in line)
    assert notice == (
        "Ctrl+C received: stopping now; waiting for the running tool 'nap' to finish (a finished tool's result is "
        "committed, never run again) (Ctrl+C again aborts at once)"
    )
    session_id = re.fullmatch(r"Session ID: (\S+)", run.out[0])[1]
    (tmp_path / "nap.started").unlink()
    resumed = strands("run", "--resume", session_id)
    assert resumed.returncode == 0, resumed.stderr
    assert not (tmp_path / "nap.started").exists()  # its committed result was replayed, the nap not taken again


def test_interrupt_with_json_prints_the_resume_command_in_the_document(child, strands):
    run = child("run", SPEC, "--json", "--sessions-dir", "my sessions", env=SLOW)
    run.wait_for("Step 1/3")
    run.proc.send_signal(signal.SIGINT)
    assert run.finish() == 130
    document = json.loads("\n".join(run.out))
    assert document["status"] == "paused" and document["reason"] == "interrupted" and document["exit_code"] == 130
    assert document["resume_command"] == f"strands run --resume {document['session_id']} --sessions-dir 'my sessions'"
    assert f"Resume with: {document['resume_command']}" in run.err
