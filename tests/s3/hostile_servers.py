"""Servers on loopback that are not the S3 a store expects: a web server answering every request with one status,
a socket that accepts and never answers, and a proxy to a real S3 server that can be told to stall mid-run."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from urllib.parse import urlparse


@contextmanager
def answering(status: int, *, error_page: bool = False) -> Iterator[str]:
    """An HTTP server answering every request with `status` and an HTML page (a redirect to itself for 3xx;
    `error_page`: the standard library's own error page, which is not well-formed XML); yields its endpoint URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            if error_page:
                self.send_error(status)
                return
            body = b"<html><body>Not here.</body></html>"
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", f"http://127.0.0.1:{self.server.server_address[1]}/elsewhere")
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _answer

        def log_message(self, *args: object) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


class StallingProxy:
    """A TCP proxy to `upstream` on a loopback port; after `stall()` it accepts connections and keeps the ones it
    has, but passes nothing on in either direction (a server that hangs mid-run)."""

    def __init__(self, upstream: str) -> None:
        parsed = urlparse(upstream)
        self._upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._stalled = threading.Event()
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def stall(self) -> None:
        self._stalled.set()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self._sockets.append(client)
            if self._stalled.is_set():
                continue  # held open, never answered
            upstream = socket.create_connection(self._upstream)
            self._sockets.append(upstream)
            for source, target in ((client, upstream), (upstream, client)):
                thread = threading.Thread(target=self._pipe, args=(source, target), daemon=True)
                self._threads.append(thread)
                thread.start()

    def _pipe(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data or self._stalled.is_set():
                    break
                target.sendall(data)
        except OSError:
            return
        if not self._stalled.is_set():
            with_shutdown(target)
        else:
            self._closed.wait()  # stalled: keep both ends open, pass nothing

    def close(self) -> None:
        self._closed.set()
        with_shutdown(self._listener)  # wakes the thread blocked in accept (closing the socket alone does not)
        self._listener.close()
        for sock in self._sockets:
            with_shutdown(sock)
            sock.close()
        for thread in self._threads:
            thread.join(10)
        assert not any(thread.is_alive() for thread in self._threads), "a proxy thread outlived the proxy"


def with_shutdown(sock: socket.socket) -> None:
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
