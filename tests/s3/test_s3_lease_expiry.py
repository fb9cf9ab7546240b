"""Right after `kill -9` of a run on S3 its lease is still live: the resume's "in use by pid P" says when the lease
expires and that the resume works then, `sessions list` shows until when the session is leased, and at that time
the resume works (real child processes against the local SeaweedFS; leases shortened to keep the wait short)."""

from __future__ import annotations

import json
import re
import signal
import time

import pytest

from tests.cli.support import Child, strands_command
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow

TTL_S, SKEW_S = "15", "2"  # long enough for two commands on a busy machine, short enough to wait for


@pytest.fixture
def short_leases(s3_env, monkeypatch) -> None:
    monkeypatch.setenv("STRANDS_S3_LEASE_TTL", TTL_S)
    monkeypatch.setenv("STRANDS_S3_LEASE_SKEW", SKEW_S)


def test_a_resume_right_after_kill_9_says_when_the_lease_expires_and_works_then(short_leases, space, tmp_path):
    url = space.url
    run = Child(
        "run", EXAMPLES / "chain-research.strands.yaml", "--sessions-dir", url, "--out", "out",
        cwd=tmp_path, env={"STRANDS_SYNTHETIC_LATENCY_MS": "300"},
    )  # fmt: skip
    try:
        run.wait_for("Step 1/3")
        run.proc.send_signal(signal.SIGKILL)
        assert run.finish() == -signal.SIGKILL
    finally:
        if run.proc.poll() is None:
            run.proc.kill()
    session_id = re.fullmatch(r"Session ID: (\S+)", run.out[0])[1]

    listed = json.loads(strands_command("sessions", "list", "--json", "--sessions-dir", url, cwd=tmp_path).stdout)
    (row,) = listed
    assert row["status"] == "running" and not row["stale"] and row["lease_until"], row
    assert re.fullmatch(r"running \(leased until \d\d:\d\d:\d\d\)", row["display_status"]), row
    table = strands_command("sessions", "list", "--sessions-dir", url, cwd=tmp_path).stdout
    assert re.search(rf"^{session_id}\s+chain-research\s+chain\s+running \(leased until \d\d:\d\d:\d\d\)", table, re.M)

    refused = strands_command("run", "--resume", session_id, "--sessions-dir", url, cwd=tmp_path)
    assert refused.returncode == 17, refused.stdout + refused.stderr
    (line,) = refused.stderr.splitlines()
    said = re.fullmatch(
        rf"Error: Session {session_id} is in use by pid {run.proc.pid} on host \S+; its lease expires at "
        r"(\d\d:\d\d:\d\d) \(in (\d+) s\) unless that process renews it: if it is gone, the resume works then",
        line,
    )
    assert said, line
    wait_s = int(said[2])
    assert wait_s <= float(TTL_S) + float(SKEW_S)

    time.sleep(wait_s + 1.5)  # the time the error named (rounded) has passed: the dead holder's lease lapsed
    resumed = strands_command("run", "--resume", session_id, "--sessions-dir", url, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "✓ Workflow complete" in resumed.stdout
    after = json.loads(strands_command("sessions", "list", "--json", "--sessions-dir", url, cwd=tmp_path).stdout)
    assert [(r["display_status"], r["lease_until"]) for r in after] == [("completed", None)]
