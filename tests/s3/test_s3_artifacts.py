"""`strands run --out s3://BUCKET/PREFIX`: artifacts written as objects after the run's units (and before
`completed`), an existing key refused without --force, S3 errors one line naming bucket and key (exit 12)."""

from __future__ import annotations

import hashlib
import json
from pathlib import PurePosixPath

import pytest

from strands_durable import LocalStore
from strands_durable.errors import ExitCode, StorageIOError
from strands_durable.runner.s3_artifacts import S3Output
from strands_durable.testing.s3_faults import (
    RESET_BEFORE,
    RESET_MID_PUT,
    SERVER_ERROR,
    SLOW_DOWN,
    TIMEOUT_AFTER_WRITE,
    FaultingClient,
)
from strands_durable.testing.s3_server import READONLY_KEY
from tests.cli.support import strands_command
from tests.conftest import EXAMPLES
from tests.s3.support import client_for, interrupted_at_first_step

pytestmark = pytest.mark.slow

SPEC = EXAMPLES / "chain-research.strands.yaml"
ARTIFACT = "durable-agent-workflows-report.md"


def test_artifacts_go_to_an_s3_out_and_an_existing_key_needs_force(s3_env, space, admin_client, tmp_path):
    sessions = tmp_path / "sessions"
    out = f"{space.url}/reports"
    key = f"{space.prefix}/reports/{ARTIFACT}"

    first = strands_command("run", SPEC, "--out", out, "--sessions-dir", sessions, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    body = admin_client.get_object(Bucket=space.bucket, Key=key)["Body"].read()
    (summary,) = LocalStore(sessions).list()
    state = LocalStore(sessions).load(summary.session_id)
    assert state.status == "completed"
    assert state.artifacts == {ARTIFACT: {"sha256": hashlib.sha256(body).hexdigest(), "bytes": len(body)}}
    assert b"# " in body and not (tmp_path / "artifacts").exists() and not (tmp_path / "s3:").exists()
    assert state.meta["runtime"]["out_dir"] == out  # recorded as given (a Path would make it `s3:/BUCKET/...`)

    again = strands_command("run", SPEC, "--out", out, "--sessions-dir", sessions, cwd=tmp_path)
    assert again.returncode == 2, (again.stdout, again.stderr)
    refused = f"Error: Artifact already exists: s3://{space.bucket}/{key} (use --force to overwrite)"
    assert again.stderr.strip() == refused
    assert len(LocalStore(sessions).list()) == 1, "a refused run left a session"

    forced = strands_command("run", SPEC, "--out", out, "--force", "--sessions-dir", sessions, cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    listed = json.loads(strands_command("sessions", "list", "--json", "--sessions-dir", sessions, cwd=tmp_path).stdout)
    assert [s["status"] for s in listed] == ["completed", "completed"]


def test_an_artifact_that_cannot_be_written_to_s3_exits_12_naming_bucket_and_key_and_is_not_completed(s3_env, tmp_path):
    sessions = tmp_path / "sessions"
    out = "s3://no-such-artifact-bucket/runs"
    where = f"s3://no-such-artifact-bucket/runs/{ARTIFACT}"

    checked = strands_command("run", SPEC, "--out", out, "--sessions-dir", sessions, cwd=tmp_path)
    assert checked.returncode == 12, (checked.stdout, checked.stderr)
    assert checked.stderr.startswith(f"Error: cannot check artifact {where}: S3 bucket not found: no-such-artifact")
    assert len(checked.stderr.strip().splitlines()) == 1
    assert not sessions.exists() or LocalStore(sessions).list() == []  # refused before any session

    # --force skips the early check: the write after the run's units fails, and the session is not completed
    written = strands_command("run", SPEC, "--out", out, "--force", "--sessions-dir", sessions, cwd=tmp_path)
    assert written.returncode == 12, (written.stdout, written.stderr)
    line = next(x for x in written.stderr.splitlines() if x.startswith("Error:"))
    assert line.startswith(f"Error: cannot write artifact {where}: S3 bucket not found: no-such-artifact-bucket")
    assert "Traceback" not in written.stderr
    (summary,) = LocalStore(sessions).list()
    state = LocalStore(sessions).load(summary.session_id)
    assert state.status != "completed" and len(state.units) == 3, (state.status, list(state.units))
    assert list(state.artifacts) == [ARTIFACT]  # claimed, never written


def test_a_run_interrupted_before_its_artifacts_writes_them_to_s3_on_resume(s3_env, space, admin_client, tmp_path):
    sessions = tmp_path / "sessions"
    out = f"{space.url}/resumed"
    interrupted_at_first_step(SPEC, "--out", out, "--sessions-dir", sessions, cwd=tmp_path)
    (summary,) = LocalStore(sessions).list()
    resumed = strands_command("run", "--resume", summary.session_id, "--sessions-dir", sessions, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    body = admin_client.get_object(Bucket=space.bucket, Key=f"{space.prefix}/resumed/{ARTIFACT}")["Body"].read()
    state = LocalStore(sessions).load(summary.session_id)
    assert state.status == "completed" and state.artifacts[ARTIFACT]["sha256"] == hashlib.sha256(body).hexdigest()


def _artifact_puts(kwargs) -> bool:
    return kwargs.get("Key", "").endswith("/report.md")


@pytest.mark.parametrize(
    "fault",
    [SERVER_ERROR, SLOW_DOWN, TIMEOUT_AFTER_WRITE, RESET_MID_PUT, RESET_BEFORE],
    ids=["500", "503-slowdown", "timeout-after-write", "reset-mid-put", "reset-before-send"],
)
def test_an_artifact_put_that_fails_once_is_retried_and_lands_whole(s3_server, space, admin_client, fault):
    faulting = FaultingClient(client_for(s3_server))
    output = S3Output(f"{space.url}/out", client=faulting)
    output.objects.retry_delays = (0.01, 0.02)
    faulting.plan("put_object", fault, when=_artifact_puts)
    assert output.write(PurePosixPath("report.md"), b"# report\n") == f"{space.url}/out/report.md"
    assert faulting.injected == [f"put_object {space.prefix}/out/report.md"]
    listed = admin_client.list_objects_v2(Bucket=space.bucket, Prefix=f"{space.prefix}/out/")["Contents"]
    assert [item["Key"] for item in listed] == [f"{space.prefix}/out/report.md"]
    assert admin_client.get_object(Bucket=space.bucket, Key=listed[0]["Key"])["Body"].read() == b"# report\n"


def test_an_artifact_put_that_keeps_failing_is_one_error_naming_the_key(s3_server, space):
    faulting = FaultingClient(client_for(s3_server))
    output = S3Output(f"{space.url}/out", client=faulting)
    output.objects.retry_delays = (0.01, 0.02)
    faulting.plan("put_object", SLOW_DOWN, times=3, when=_artifact_puts)
    with pytest.raises(StorageIOError) as raised:
        output.write(PurePosixPath("report.md"), b"# report\n")
    assert raised.value.exit_code == ExitCode.IO
    assert str(raised.value).startswith(f"cannot write artifact {space.url}/out/report.md: S3 PUT ")
    assert "SlowDown" in str(raised.value) and faulting.pending == 0


def test_an_out_the_credentials_cannot_write_fails_the_run_with_12_and_a_resume_writes_it(s3_env, space, tmp_path):
    """A real refusal from the server (a read-only identity): the run's units are committed, the session is not
    completed, and a resume with credentials that may write finishes it without running a unit again."""
    sessions = tmp_path / "sessions"
    out = f"{space.url}/denied"
    reader = {"AWS_ACCESS_KEY_ID": READONLY_KEY[0], "AWS_SECRET_ACCESS_KEY": READONLY_KEY[1]}
    denied = strands_command("run", SPEC, "--out", out, "--sessions-dir", sessions, cwd=tmp_path, env=reader)
    assert denied.returncode == 12, (denied.stdout, denied.stderr)
    line = next(x for x in denied.stderr.splitlines() if x.startswith("Error:"))
    assert line.startswith(f"Error: cannot write artifact {out}/{ARTIFACT}: Access denied to S3 bucket {space.bucket}")
    assert "Traceback" not in denied.stderr
    (summary,) = LocalStore(sessions).list()
    state = LocalStore(sessions).load(summary.session_id)
    assert state.status != "completed" and len(state.units) == 3

    resumed = strands_command("run", "--resume", summary.session_id, "--sessions-dir", sessions, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    state = LocalStore(sessions).load(summary.session_id)
    assert state.status == "completed" and len(state.units) == 3 and list(state.artifacts) == [ARTIFACT]
