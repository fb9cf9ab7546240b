"""One local SeaweedFS S3 server per test session (per xdist worker), and a fresh bucket per test.

In CI (CI=true) a server that cannot start fails the tests; elsewhere they are skipped with the reason.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from strands_durable.store.s3.local_server import LocalS3Server, start_server
from tests.s3.support import MotoServer, Space, client_for, start_moto


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


@pytest.fixture(scope="session")
def shared_bucket(s3_server) -> str:
    """One bucket for the session (creating one costs SeaweedFS ~0.5 s); tests keep apart by key prefix."""
    from strands_durable.store.s3.client import make_client

    name = f"strands-tests-{uuid.uuid4().hex[:12]}"
    make_client(s3_server.endpoint, s3_server.access_key, s3_server.secret_key).create_bucket(Bucket=name)
    return name


@pytest.fixture
def space(shared_bucket) -> Space:
    return Space(shared_bucket, f"t-{uuid.uuid4().hex[:16]}")


@pytest.fixture(scope="session")
def special_buckets(s3_server) -> dict[str, str]:
    """A versioned bucket and one with default encryption (SSE-S3, AES256)."""
    from strands_durable.store.s3.client import make_client

    client = make_client(s3_server.endpoint, s3_server.access_key, s3_server.secret_key)
    names = {"versioned": f"versioned-{uuid.uuid4().hex[:12]}", "encrypted": f"encrypted-{uuid.uuid4().hex[:12]}"}
    for name in names.values():
        client.create_bucket(Bucket=name)
    client.put_bucket_versioning(Bucket=names["versioned"], VersioningConfiguration={"Status": "Enabled"})
    rule = {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
    client.put_bucket_encryption(Bucket=names["encrypted"], ServerSideEncryptionConfiguration={"Rules": [rule]})
    return names


@pytest.fixture(params=["plain", "versioned", "encrypted"])
def any_space(request, shared_bucket, special_buckets) -> Space:
    """A test's place in a plain, a versioned and an encrypted bucket (the test runs once in each)."""
    bucket = shared_bucket if request.param == "plain" else special_buckets[request.param]
    return Space(bucket, f"t-{uuid.uuid4().hex[:16]}")


@pytest.fixture(scope="session")
def moto_s3(tmp_path_factory) -> Iterator[MotoServer]:
    """moto's S3 in server mode (a real HTTP server on loopback, its own process): the second S3 implementation."""
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    yield from _serving(lambda: start_moto(log), ModuleNotFoundError, "moto[server]")


@pytest.fixture
def moto_space(moto_s3) -> Space:
    """A test's own bucket on the moto server (buckets cost nothing there)."""
    name = f"strands-moto-{uuid.uuid4().hex[:12]}"
    client_for(moto_s3).create_bucket(Bucket=name)
    return Space(name, f"t-{uuid.uuid4().hex[:16]}")
