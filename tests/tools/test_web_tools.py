"""`web_fetch` with `--network` against a real HTTP server on loopback: its response is committed like any tool's;
the run records `--network` so that a resume repeats the choice."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.tools.support import call, run_script, scripted_spec, tool_results

PAGE = b"<html><head><title>T</title><script>x()</script></head><body><h1>Tides</h1><p>Twice a day.</p></body></html>"


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def page_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/tides"
    server.shutdown()
    server.server_close()


def test_web_fetch_with_network_returns_markdown_and_html_and_commits_them(tmp_path, page_url):
    spec = scripted_spec(tmp_path, "[web_fetch]")
    turns = [call("web_fetch", url=page_url, mode="markdown"), call("web_fetch", url=page_url)]
    outcome, store = run_script(spec, tmp_path, turns, network=True)
    markdown, html = (r["content"][0]["json"] for r in tool_results(store, outcome.session_id))
    assert markdown["status"] == 200 and "# Tides" in markdown["markdown"] and "x()" not in markdown["markdown"]
    assert html["body"] == PAGE.decode() and html["url"] == page_url
    assert store.load(outcome.session_id).meta["runtime"]["network"] is True
    assert json.dumps(markdown)  # plain JSON, as journaled
