"""A hostile web server cannot hang `web_fetch` (issue 39: no input hangs a run): a page of unclosed `<style` tags
is converted to markdown in linear time (Python's `re`, and Python's HTML parser under markdownify, each took minutes
over it: the regex in a C loop Ctrl+C cannot stop),
and a server that keeps sending a byte now and then is cut off at the call's timeout, which a model cannot raise
past MAX_TIMEOUT_S. Real HTTP servers on loopback; the tool as the agent calls it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from strands_durable.runner import web_tools
from strands_durable.runner.web_tools import MAX_BODY_CHARS, MAX_TIMEOUT_S, web_fetch

UNCLOSED = b"<style " * (MAX_BODY_CHARS // 7)  # each unclosed tag made Python's `re` scan to the end of the page
DRIP_FOR_S = 30.0  # how long the dripping server goes on before it gives up


class _Hostile(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        if self.path == "/unclosed":
            self.send_header("Content-Length", str(len(UNCLOSED) + 13))
            self.end_headers()
            self.wfile.write(b"<p>Tides</p>\n" + UNCLOSED)
            return
        self.end_headers()  # /drip: no length, one byte every 0.2 s: no single read ever times out
        end = time.monotonic() + DRIP_FOR_S
        try:
            while time.monotonic() < end:
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass  # the client hung up: what the fix does

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_page_of_unclosed_tags_becomes_markdown_in_linear_time(server: str) -> None:
    started = time.monotonic()
    result = web_fetch(url=f"{server}/unclosed", mode="markdown")
    elapsed = time.monotonic() - started
    assert result["status"] == "success"
    assert result["content"][0]["json"]["markdown"].startswith("Tides")
    assert elapsed < 10, f"{elapsed:.1f} s for a {len(UNCLOSED)}-byte page"


def test_a_server_that_drips_its_body_is_cut_off_at_the_timeout(server: str) -> None:
    started = time.monotonic()
    with pytest.raises(ValueError, match=r"timed out after 2 seconds \(the body was still arriving\)"):
        web_fetch(url=f"{server}/drip", timeout=2)
    assert time.monotonic() - started < 6


def test_a_model_cannot_raise_the_timeout_past_the_cap(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert MAX_TIMEOUT_S == 60
    monkeypatch.setattr(web_tools, "MAX_TIMEOUT_S", 3)  # the cap's value, made short enough to wait for
    started = time.monotonic()
    with pytest.raises(ValueError, match=r"timed out after 3 seconds"):
        web_fetch(url=f"{server}/drip", timeout=10**9)
    assert time.monotonic() - started < 7
