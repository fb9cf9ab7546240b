"""The scorecard's servers for the tests of its factories: each started once per test session (per xdist worker)
on loopback by `bench/scorecard/servers.py`, its environment published for the factories and their child
processes. In CI (CI=true) a server that cannot start fails the tests; elsewhere they skip, naming the server.
A backend whose PyPI package is not installed skips likewise, unless SCORECARD_BACKENDS_REQUIRED=1 (the
scorecard's CI step, which installs bench/scorecard/requirements.txt, sets it): then it fails."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from bench.scorecard.servers import STARTERS, Server, ServerUnavailable

from tests.s3.conftest import _serving  # start, skip (fail in CI) when it cannot, stop


def backends_required() -> bool:
    return os.environ.get("SCORECARD_BACKENDS_REQUIRED") == "1"


def _session_server(name: str) -> Any:
    """A session-scoped fixture `<name>_server`: the started server, stopped at the end."""

    @pytest.fixture(scope="session", name=f"{name}_server")
    def server(tmp_path_factory) -> Iterator[Server]:
        directory = tmp_path_factory.mktemp(f"scorecard-{name}")
        yield from _serving(lambda: STARTERS[name](directory), ServerUnavailable, f"{name} server")

    return server


redis_server = _session_server("redis")
postgresql_server = _session_server("postgresql")
dynamodb_server = _session_server("dynamodb")
s3_server = _session_server("s3")


@pytest.fixture
def server_env(request, monkeypatch) -> dict[str, str]:
    """The environment of the server `request.param` names (None: no server), set for this test."""
    if request.param is None:
        return {}
    server: Server = request.getfixturevalue(f"{request.param}_server")
    for name, value in server.env.items():
        monkeypatch.setenv(name, value)
    return server.env
