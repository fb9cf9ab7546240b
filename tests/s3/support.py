"""Helpers of the S3 tests: stores over the local server with counting or faulting clients, small sessions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from strands_durable.store.layout import new_session_id
from strands_durable.store.s3 import S3Store
from strands_durable.store.s3.client import make_client
from strands_durable.store.s3.local_server import LocalS3Server

FAST_RETRIES = (0.01, 0.02, 0.04)


def client_for(server: LocalS3Server, *, access_key: str | None = None, secret_key: str | None = None) -> Any:
    return make_client(server.endpoint, access_key or server.access_key, secret_key or server.secret_key)


@dataclass(frozen=True)
class Space:
    """A test's own place in the shared bucket."""

    bucket: str
    prefix: str

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"


@dataclass
class MotoServer:
    """moto's S3 served on loopback by a ThreadedMotoServer; quacks like LocalS3Server where the tests use it
    (`endpoint`, credentials, `env()`). It accepts any credentials."""

    server: Any
    endpoint: str
    access_key: str = "moto-test-key"
    secret_key: str = "moto-test-secret"

    def env(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL_S3": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": "us-east-1",
        }

    def stop(self) -> None:
        self.server.stop()


def start_moto() -> MotoServer:
    """Start moto's S3 on a free loopback port (moto is imported here: ModuleNotFoundError when missing)."""
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return MotoServer(server, f"http://{host}:{port}")


def store_for(server: LocalS3Server, space: Space, *, client: Any = None, **opts: Any) -> S3Store:
    opts.setdefault("retry_delays", FAST_RETRIES)
    return S3Store(space.bucket, space.prefix, client=client if client is not None else client_for(server), **opts)


def meta(session_id: str | None = None) -> dict[str, Any]:
    return {
        "session_id": session_id or new_session_id(),
        "workflow_name": "s3-test",
        "pattern": "chain",
        "created_at": "2026-01-01T00:00:00+00:00",
    }


def unit(index: int) -> dict[str, Any]:
    return {"type": "unit", "unit": f"step[{index}]", "record": {"response": f"answer {index}", "status": "done"}}


def interrupted_at_first_step(*args: Any, cwd: Any) -> Any:
    """`strands run *args` (slowed by synthetic latency) stopped with Ctrl+C at its first step; the finished Child."""
    import signal

    from tests.cli.support import Child

    run = Child("run", *args, cwd=cwd, env={"STRANDS_SYNTHETIC_LATENCY_MS": "300"})
    try:
        run.wait_for("Step 1/3")
        run.proc.send_signal(signal.SIGINT)
        assert run.finish() == 130, (run.out, run.err)
    finally:
        if run.proc.poll() is None:
            run.proc.kill()
    return run
