"""One local SeaweedFS S3 server per test session (per xdist worker), and a fresh key prefix per test.

A test that asks for `server` (and `server_space` or `server_any_space`) runs on each S3 implementation: SeaweedFS,
the reference, and moto's server mode, so the store does not lean on one server's quirks (docs/storage.md, "Two
servers"); a test that asks for `s3_server` runs on SeaweedFS only. In CI (CI=true) a server that cannot start fails
the tests; elsewhere they are skipped with the reason.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from strands_durable.testing.s3_server import LocalS3Server, start_server
from tests.s3.support import BUCKET_KINDS, SERVERS, MotoServer, Space, bucket_on, start_moto


@pytest.fixture(autouse=True)
def _scratch_on_this_machine(tmp_path, monkeypatch):
    """S3 sessions keep their local scratch directories under the test's own directory."""
    monkeypatch.setenv("STRANDS_S3_SCRATCH_DIR", str(tmp_path / "s3-scratch"))


def _serving(start: Callable[[], Any], errors: type[Exception], what: str) -> Iterator[Any]:
    """A started test server, stopped at the end; one that cannot start fails in CI and skips elsewhere."""
    try:
        server = start()
    except errors as exc:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{what} is required in CI: {exc}")
        pytest.skip(f"no {what}: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory) -> Iterator[LocalS3Server]:
    yield from _serving(lambda: start_server(tmp_path_factory.mktemp("seaweedfs")), RuntimeError, "local S3 server")


@pytest.fixture
def s3_env(s3_server, monkeypatch) -> dict[str, str]:
    """The AWS environment that points boto3 (and child processes) at the local server."""
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    return s3_server.env()


@pytest.fixture
def admin_client(s3_server):
    from strands_durable.store.s3.client import make_client

    return make_client(s3_server.endpoint, s3_server.access_key, s3_server.secret_key)


def _own_prefix() -> str:
    return f"t-{uuid.uuid4().hex[:16]}"


@pytest.fixture(scope="session")
def shared_bucket(s3_server) -> str:
    """The plain bucket on SeaweedFS."""
    return bucket_on(s3_server, "plain")


@pytest.fixture
def space(shared_bucket) -> Space:
    return Space(shared_bucket, _own_prefix())


@pytest.fixture(scope="session")
def special_buckets(s3_server) -> dict[str, str]:
    """A versioned bucket and one with default encryption (SSE-S3, AES256) on SeaweedFS."""
    return {kind: bucket_on(s3_server, kind) for kind in ("versioned", "encrypted")}


@pytest.fixture(params=BUCKET_KINDS)
def any_space(request, s3_server) -> Space:
    """A test's place in a plain, a versioned and an encrypted bucket on SeaweedFS (the test runs once in each)."""
    return Space(bucket_on(s3_server, request.param), _own_prefix())


@pytest.fixture(scope="session", params=SERVERS)
def server(request) -> Any:
    """The S3 server a test runs on, once on each: SeaweedFS (`s3_server`) and moto (`moto_s3`)."""
    return request.getfixturevalue("s3_server" if request.param == "seaweedfs" else "moto_s3")


@pytest.fixture
def server_space(server) -> Space:
    """A test's own place in the plain bucket of `server`."""
    return Space(bucket_on(server, "plain"), _own_prefix())


@pytest.fixture(params=BUCKET_KINDS)
def server_any_space(request, server) -> Space:
    """A test's place in a plain, a versioned and an encrypted bucket of `server` (once in each, on each server)."""
    return Space(bucket_on(server, request.param), _own_prefix())


@pytest.fixture(scope="session")
def moto_s3(tmp_path_factory) -> Iterator[MotoServer]:
    """moto's S3 in server mode (a real HTTP server on loopback, its own process): the second S3 implementation."""
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    yield from _serving(lambda: start_moto(log), ModuleNotFoundError, "moto[server]")
