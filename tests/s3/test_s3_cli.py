"""`strands` end to end with sessions on S3 (`--sessions-dir s3://...` and STRANDS_SESSIONS_DIR): run, Ctrl+C,
resume, and every `sessions` command, as child processes against the local SeaweedFS."""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.cli.support import strands_command
from tests.conftest import EXAMPLES
from tests.s3.support import interrupted_at_first_step

pytestmark = pytest.mark.slow

SPEC = EXAMPLES / "chain-research.strands.yaml"


def test_run_interrupt_resume_list_show_delete_cleanup_on_s3(s3_env, space, tmp_path):
    url = space.url

    def strands(*args, env=None):
        return strands_command(*args, cwd=tmp_path, env=env)

    run = interrupted_at_first_step(SPEC, "--sessions-dir", url, cwd=tmp_path)
    session_id = re.fullmatch(r"Session ID: (\S+)", run.out[0])[1]
    assert run.err[-1] == f"Resume with: strands run --resume {session_id} --sessions-dir {url}"
    listed = json.loads(strands("sessions", "list", "--json", "--sessions-dir", url).stdout)
    assert [(s["session_id"], s["display_status"]) for s in listed] == [(session_id, "paused (interrupted)")]

    resumed = strands("run", "--resume", session_id[:8], "--sessions-dir", url)
    assert resumed.returncode == 0, resumed.stderr
    assert "✓ Workflow complete" in resumed.stdout
    assert (tmp_path / "artifacts" / "durable-agent-workflows-report.md").is_file()

    # STRANDS_SESSIONS_DIR works as well as the flag
    env = {"STRANDS_SESSIONS_DIR": url}
    shown = json.loads(strands("sessions", "show", session_id, "--json", env=env).stdout)
    assert shown["session"]["status"] == "completed"
    exported = json.loads(strands("sessions", "export", session_id, env=env).stdout)
    assert exported["session"]["session_id"] == session_id and exported["agents"]
    table = strands("sessions", "list", env=env).stdout
    assert re.search(rf"^{session_id}\s+chain-research\s+chain\s+completed\s", table, re.M), table

    deleted = strands("sessions", "delete", session_id, "--force", env=env)
    assert deleted.returncode == 0, deleted.stderr
    assert json.loads(strands("sessions", "list", "--json", env=env).stdout) == []

    again = strands("run", SPEC, "--force", "--json", env=env)
    assert again.returncode == 0, again.stderr
    later = json.loads(again.stdout)["session_id"]
    time.sleep(1.1)
    cleaned = strands("sessions", "cleanup", "--older-than", "1s", "--force", env=env)
    assert cleaned.returncode == 0, cleaned.stderr
    assert json.loads(strands("sessions", "list", "--json", env=env).stdout) == []
    client_keys = _all_keys(space)
    # every object of both sessions is gone (leases and views too) but each delete's fence record
    assert sorted(key.split("/sessions/")[1].split("/")[0] for key in client_keys) == sorted([session_id, later])
    assert all(re.fullmatch(rf"{space.prefix}/sessions/[^/]+/commits/\d{{12}}", key) for key in client_keys)


def _all_keys(space) -> list[str]:
    import os

    from strands_durable.store.s3.client import make_client

    client = make_client(os.environ["AWS_ENDPOINT_URL_S3"])
    response = client.list_objects_v2(Bucket=space.bucket, Prefix=f"{space.prefix}/")
    return [item["Key"] for item in response.get("Contents", ())]


@pytest.mark.parametrize(
    ("where", "env", "message"),
    [
        (
            "s3://no-such-bucket-here/p",
            {},
            "Error: S3 bucket not found: no-such-bucket-here (endpoint http://127.0.0.1:",
        ),
        (None, {"AWS_SECRET_ACCESS_KEY": "wrong"}, "Error: Access denied to S3 bucket "),
        (
            None,
            {"AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9"},
            "Error: S3 endpoint unreachable: http://127.0.0.1:9 (bucket ",
        ),
    ],
    ids=["missing-bucket", "bad-credentials", "unreachable"],
)
def test_s3_setup_errors_are_one_line_and_exit_12(s3_env, space, tmp_path, where, env, message):
    listed = strands_command("sessions", "list", "--sessions-dir", where or space.url, cwd=tmp_path, env=env)
    assert listed.returncode == 12, (listed.stdout, listed.stderr)
    assert listed.stderr.startswith(message), listed.stderr
    assert len(listed.stderr.strip().splitlines()) == 1 and "Traceback" not in listed.stderr
