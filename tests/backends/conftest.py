"""The scorecard's servers for the tests of its factories: each started once per test session (per xdist worker)
on loopback by `bench/scorecard/servers.py`, its environment published for the factories and their child
processes. In CI (CI=true) a server that cannot start fails the tests; elsewhere they skip, naming the server.
A backend whose PyPI package is not installed skips likewise, unless SCORECARD_BACKENDS_REQUIRED=1 (the
scorecard's CI step, which installs bench/scorecard/requirements.txt, sets it): then it fails."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from bench.scorecard.servers import STARTERS, Server, ServerUnavailable


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def backends_required() -> bool:
    return os.environ.get("SCORECARD_BACKENDS_REQUIRED") == "1"


def _start(name: str, tmp_path_factory) -> Iterator[Server]:
    try:
        server = STARTERS[name](tmp_path_factory.mktemp(f"scorecard-{name}"))
    except ServerUnavailable as exc:
        if _in_ci():
            pytest.fail(f"the {name} server is required in CI: {exc}")
        pytest.skip(f"no {name} server: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory) -> Iterator[Server]:
    yield from _start("redis", tmp_path_factory)


@pytest.fixture(scope="session")
def postgresql_server(tmp_path_factory) -> Iterator[Server]:
    yield from _start("postgresql", tmp_path_factory)


@pytest.fixture(scope="session")
def dynamodb_server(tmp_path_factory) -> Iterator[Server]:
    yield from _start("dynamodb", tmp_path_factory)


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory) -> Iterator[Server]:
    yield from _start("s3", tmp_path_factory)


@pytest.fixture
def server_env(request, monkeypatch) -> dict[str, str]:
    """The environment of the server `request.param` names (None: no server), set for this test."""
    if request.param is None:
        return {}
    server: Server = request.getfixturevalue(f"{request.param}_server")
    for name, value in server.env.items():
        monkeypatch.setenv(name, value)
    return server.env
