"""Servers that are not the S3 a run expects never hang it or crash it (issue 39, items 8 and 9): an endpoint that
is not S3 (a web server's 404, a redirect) is exit 12 naming the endpoint; every S3 operation has one deadline
(STRANDS_S3_DEADLINE), whatever its retries and read-backs; and the first Ctrl+C stops a run that waits on a
stalled server at once, leaving the session resumable."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Iterator

import pytest

from strands_durable.store.s3.client import Objects, make_client
from tests.cli.support import Child, strands_command
from tests.conftest import EXAMPLES
from tests.s3.hostile_servers import StallingProxy, answering

pytestmark = pytest.mark.slow

SPEC = EXAMPLES / "chain-research.strands.yaml"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "any", "AWS_SECRET_ACCESS_KEY": "any", "AWS_REGION": "us-east-1"}


@pytest.mark.parametrize(
    ("status", "error_page"),
    [(404, False), (404, True), (301, False), (400, False)],
    ids=["404", "404-page", "301", "400"],
)
def test_an_endpoint_that_is_not_s3_is_exit_12_naming_it(tmp_path, status: int, error_page: bool) -> None:
    """`error_page`: `python -m http.server`'s own 404 page, which botocore cannot parse (its error code is then
    the status itself)."""
    with answering(status, error_page=error_page) as endpoint:
        env = {**CREDENTIALS, "AWS_ENDPOINT_URL_S3": endpoint}
        for command in (("sessions", "list"), ("run", SPEC)):
            result = strands_command(*command, "--sessions-dir", "s3://some-bucket/p", cwd=tmp_path, env=env)
            assert result.returncode == 12, (command, result.stderr)
            assert re.fullmatch(
                rf"Error: S3 endpoint {re.escape(endpoint)} does not answer as S3 \(HTTP {status} to LIST p/\S*, "
                r"bucket some-bucket\): check AWS_ENDPOINT_URL_S3\n",
                result.stderr,
            ), result.stderr


@pytest.fixture
def stalled() -> Iterator[str]:
    proxy = StallingProxy("http://127.0.0.1:9")
    proxy.stall()  # accepts, never answers
    yield proxy.endpoint
    proxy.close()


def test_an_operation_on_a_stalled_server_ends_at_its_deadline(stalled: str, monkeypatch) -> None:
    from strands_durable.errors import S3DeadlineExceeded

    for name, value in {**CREDENTIALS, "STRANDS_S3_DEADLINE": "2"}.items():
        monkeypatch.setenv(name, value)
    objects = Objects(make_client(stalled), "some-bucket")
    for operation in (lambda: objects.get("k"), lambda: objects.put_new("k", b"data")):
        started = time.monotonic()
        with pytest.raises(S3DeadlineExceeded) as raised:
            operation()
        elapsed = time.monotonic() - started
        assert 2 <= elapsed < 2 + 2 + 1.5, elapsed  # the deadline, plus at most one request's read timeout
        assert f"did not finish within 2 s at {stalled} (bucket some-bucket" in str(raised.value)


def test_a_command_on_a_stalled_server_is_exit_12_after_the_deadline(stalled: str, tmp_path) -> None:
    env = {**CREDENTIALS, "AWS_ENDPOINT_URL_S3": stalled, "STRANDS_S3_DEADLINE": "2"}
    started = time.monotonic()
    listed = strands_command("sessions", "list", "--sessions-dir", "s3://some-bucket/p", cwd=tmp_path, env=env)
    assert listed.returncode == 12, listed.stderr
    assert re.fullmatch(
        rf"Error: S3 LIST p/\S+ did not finish within 2 s at {stalled} \(bucket some-bucket; the deadline is "
        r"STRANDS_S3_DEADLINE\)\n",
        listed.stderr,
    ), listed.stderr
    assert time.monotonic() - started < 30
    bad = strands_command(
        "sessions",
        "list",
        "--sessions-dir",
        "s3://some-bucket/p",
        cwd=tmp_path,
        env={**env, "STRANDS_S3_DEADLINE": "soon"},
    )
    assert (bad.returncode, bad.stderr) == (2, "Error: STRANDS_S3_DEADLINE: not a positive number of seconds: 'soon'\n")


def test_the_first_ctrl_c_stops_a_run_stalled_on_s3_at_once_and_the_session_resumes(s3_env, space, tmp_path) -> None:
    proxy = StallingProxy(s3_env["AWS_ENDPOINT_URL_S3"])
    leases = {"STRANDS_S3_LEASE_TTL": "2", "STRANDS_S3_LEASE_SKEW": "1"}
    try:
        run = Child(
            "run",
            SPEC,
            "--sessions-dir",
            space.url,
            cwd=tmp_path,
            env={"AWS_ENDPOINT_URL_S3": proxy.endpoint, "STRANDS_SYNTHETIC_LATENCY_MS": "300", **leases},
        )
        try:
            run.wait_for("Step 1/3")
            proxy.stall()  # the server hangs mid-run: the run's next request waits for ever
            time.sleep(2.5)
            assert run.proc.poll() is None, (run.out, run.err)
            run.proc.send_signal(signal.SIGINT)  # one Ctrl+C
            signalled = time.monotonic()
            code = run.finish(timeout=30)
            stopped_after = time.monotonic() - signalled
        finally:
            if run.proc.poll() is None:
                run.proc.kill()
                run.finish()
        assert code == 130, (run.out, run.err)
        assert stopped_after < 5, stopped_after
        session_id = re.fullmatch(r"Session ID: (\S+)", run.out[0])[1]
        assert any(line.startswith(f"Aborted (Ctrl+C while waiting on S3 at {proxy.endpoint} (") for line in run.err), (
            run.err
        )
        assert f"Resume with: strands run --resume {session_id} --sessions-dir {space.url}" in run.err
    finally:
        proxy.close()
    time.sleep(3.5)  # the dead run's lease expires (TTL 2 s, skew 1 s)
    resumed = strands_command("run", "--resume", session_id, "--sessions-dir", space.url, cwd=tmp_path, env=leases)
    assert resumed.returncode == 0, resumed.stderr
    assert "✓ Workflow complete" in resumed.stdout
