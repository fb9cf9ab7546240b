"""The test fixture's dev server is started again when a test finds it exited (tests/temporal/conftest.py)."""

from __future__ import annotations

import socket

import pytest

from tests.temporal.conftest import _DevServer


def test_a_dev_server_found_exited_is_started_again_with_a_warning(tmp_path_factory):
    dev = _DevServer(tmp_path_factory)
    try:
        first = dev.address()
        assert dev.address() == first  # alive: the same server
        dev.server.process.kill()
        dev.server.process.wait()
        with pytest.warns(UserWarning, match=r"had exited \(-9\); started a new one"):
            second = dev.address()
        host, port = second.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5):
            pass
        assert dev.server.process.poll() is None
    finally:
        dev.server.stop()
