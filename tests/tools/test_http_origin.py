"""An HTTP executor's requests stay on its base_url (scheme, host, port and path prefix): a model-chosen absolute URL,
`//host`, a path that climbs out of the base path or a redirect to another origin is refused as the tool's error
naming the rule, and the secret headers never reach the second server. Two real loopback servers: the executor's
own and another one that must see nothing."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.tools.support import call, http_spec, result_text, run_script, tool_results

SECRET = "tok-0riginal-Secret"


class Server:
    """A loopback HTTP server that records every request; `/go?to=URL` answers a 302 redirect to URL."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        recorder = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                recorder.append((self.path, dict(self.headers)))
                if self.path.startswith("/api/go?to="):
                    self.send_response(302)
                    self.send_header("Location", self.path.split("=", 1)[1])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = f"reached {self.path}".encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]


@pytest.fixture
def servers() -> Iterator[tuple[Server, Server]]:
    pair = (Server(), Server())
    for server in pair:
        server.thread.start()
    yield pair
    for server in pair:
        with contextlib.suppress(Exception):
            server.httpd.shutdown()
            server.httpd.server_close()


def _spec(tmp_path, base_url: str):
    return http_spec(tmp_path, base_url, headers='{Authorization: "Bearer ${API_TOKEN}", X-Api-Key: "${API_TOKEN}"}')


def test_requests_that_leave_the_base_url_are_refused_and_the_other_host_sees_nothing(tmp_path, servers, monkeypatch):
    own, other = servers
    monkeypatch.setenv("HTTP_TEST_TOKEN", SECRET)
    other_port = other.url.rsplit(":", 1)[1]
    turns = [
        call("api", method="GET", path=f"{other.url}/steal"),  # an absolute URL
        call("api", method="GET", path=f"//127.0.0.1:{other_port}/steal"),  # a network-path reference
        call("api", method="GET", path="/../admin"),  # climbs out of /api
        call("api", method="GET", path="/%2e%2e/admin"),  # the same, percent-encoded
        call("api", method="GET", path=f"/go?to={other.url}/steal"),  # a redirect to another origin
        call("api", method="GET", path="/go?to=/api/landing"),  # a redirect that stays: followed
    ]
    outcome, store = run_script(_spec(tmp_path, f"{own.url}/api"), tmp_path, turns, network=True)
    assert outcome.status == "completed"
    absolute, network_path, climbing, encoded, redirected, followed = tool_results(store, outcome.session_id)
    for refused in (absolute, network_path):
        assert refused["status"] == "error"
        assert "must be relative to the executor's base_url" in result_text(refused)
    for refused in (climbing, encoded):
        assert refused["status"] == "error" and "stays under its base_url's path '/api/'" in result_text(refused)
    assert redirected["status"] == "error"
    assert f"request to http://127.0.0.1:{other_port} refused" in result_text(redirected)
    assert "only reaches its base_url's origin" in result_text(redirected)
    assert followed["status"] == "success" and followed["content"][0]["json"]["body"] == "reached /api/landing"
    assert other.requests == []  # the secret headers never reached the second server
    assert own.paths() == [f"/api/go?to={other.url}/steal", "/api/go?to=/api/landing", "/api/landing"]
    assert all(headers["X-Api-Key"] == SECRET for _, headers in own.requests)  # sent where it belongs


def test_a_base_url_without_a_path_allows_every_path_of_its_origin(tmp_path, servers, monkeypatch):
    own, other = servers
    monkeypatch.setenv("HTTP_TEST_TOKEN", SECRET)
    turns = [call("api", method="GET", path="/anything/below"), call("api", method="GET", path=f"{other.url}/x")]
    outcome, store = run_script(_spec(tmp_path, own.url), tmp_path, turns, network=True)
    inside, outside = tool_results(store, outcome.session_id)
    assert inside["status"] == "success" and outside["status"] == "error"
    assert own.paths() == ["/anything/below"] and other.requests == []
