"""HTTP executors against a real HTTP server on loopback: responses are committed and replayed (never fetched twice),
secrets from the environment are sent but never stored (echoes redacted), and a POST whose process is killed after
the server saw it is not sent again: the resume answers "outcome unknown" (a GET is simply re-sent)."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from strands_durable import CrashPoints, InjectedCrash, LocalStore, RunOptions, resume
from tests.tools.support import call, http_spec, result_text, run_and_kill, run_script, tool_results

SECRET = "s3cr3t-token-value"


class Recorder:
    """What the server saw, and whether requests to /hang should hang (a process killed mid-request)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str], str]] = []
        self.seen = threading.Event()
        self.release = threading.Event()

    def count(self, method: str, path: str) -> int:
        return sum(1 for m, p, _, _ in self.requests if (m, p) == (method, path))


def _handler(recorder: Recorder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode() if length else ""
            recorder.requests.append((self.command, self.path, dict(self.headers), body))
            if self.path.startswith("/hang"):
                recorder.seen.set()
                recorder.release.wait(30)
            payload = json.dumps({"you_sent": dict(self.headers), "body": body, "path": self.path}).encode()
            self.send_response(201 if self.command == "POST" else 200)
            self.send_header("Content-Type", "application/json")
            self.send_header("X-Echo-Auth", self.headers.get("Authorization", ""))
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a client killed while we held it
                self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_PUT = _answer

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@pytest.fixture(scope="module")
def server():
    recorder = Recorder()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(recorder))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield recorder, f"http://127.0.0.1:{httpd.server_address[1]}"
    recorder.release.set()
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def recorder(server):
    recorder, _ = server
    recorder.requests.clear()
    recorder.seen.clear()
    recorder.release.clear()
    return recorder


def session_bytes(store: LocalStore, session_id: str) -> bytes:
    root = store.directory_of(session_id)
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def test_a_response_is_committed_and_its_secret_never_stored(tmp_path, server, recorder, monkeypatch):
    _, base_url = server
    monkeypatch.setenv("HTTP_TEST_TOKEN", SECRET)
    spec = http_spec(tmp_path, base_url)
    turns = [
        call("api", method="GET", path="/items?x=1"),
        call("api", method="POST", path="/items", json_data={"a": 1}),
    ]
    outcome, store = run_script(spec, tmp_path, turns, network=True)
    got, posted = tool_results(store, outcome.session_id)
    assert got["status"] == "success" and got["content"][0]["json"]["status"] == 200
    assert posted["content"][0]["json"]["status"] == 201 and json.loads(posted["content"][0]["json"]["body"])["body"]
    assert recorder.requests[0][2]["Authorization"] == f"Bearer {SECRET}"  # the secret was sent
    assert "Bearer [REDACTED]" in result_text(got) and SECRET not in result_text(got)  # its echo is redacted
    assert SECRET.encode() not in session_bytes(store, outcome.session_id)


def test_an_http_executor_is_refused_offline_before_a_session(tmp_path, server):
    from strands_durable.errors import Unsupported

    with pytest.raises(Unsupported, match=r"HTTP executor tool 'api'.*--network"):
        run_script(http_spec(tmp_path, server[1]), tmp_path, [])
    assert not list((tmp_path / "sessions").glob("*"))


def test_a_committed_response_is_replayed_on_resume_not_fetched_again(tmp_path, server, recorder, monkeypatch):
    _, base_url = server
    monkeypatch.setenv("HTTP_TEST_TOKEN", SECRET)
    spec = http_spec(tmp_path, base_url)
    crash = CrashPoints()

    def crash_after_commit(point) -> None:
        if point.site == "tool.committed":
            raise InjectedCrash(point)

    crash.subscribe(crash_after_commit)
    with pytest.raises(InjectedCrash):
        run_script(spec, tmp_path, [call("api", method="POST", path="/once")], network=True, crash_points=crash)
    store = LocalStore(tmp_path / "sessions")
    (session_id,) = store.session_ids()
    outcome = resume(
        session_id, RunOptions(scripts={"worker": [call("api", method="POST", path="/once"), "Done."]}), store=store
    )
    assert outcome.status == "completed"
    assert recorder.count("POST", "/once") == 1
    (result,) = tool_results(store, session_id)
    assert result["content"][0]["json"]["status"] == 201


@pytest.mark.slow
@pytest.mark.parametrize(("method", "sent_after_resume"), [("POST", 1), ("PATCH", 1), ("GET", 2), ("PUT", 2)])
def test_a_call_killed_after_the_server_saw_it(tmp_path, server, recorder, method, sent_after_resume, monkeypatch):
    """SIGKILL while the server holds the request: POST/PATCH are answered "outcome unknown" on resume (the server
    saw exactly one request); idempotent methods are sent again (at-least-once)."""
    _, base_url = server
    monkeypatch.setenv("HTTP_TEST_TOKEN", SECRET)
    spec = http_spec(tmp_path, base_url, script=[call("api", method=method, path="/hang")])
    command = [sys.executable, "-m", "strands_durable", "run", str(spec), "--network"]
    command += ["--sessions-dir", str(tmp_path / "sessions"), "--out", str(tmp_path / "out")]
    run_and_kill(command, recorder.seen.is_set)
    recorder.release.set()  # the server answers the dead connection; nobody reads it
    time.sleep(0.05)
    assert recorder.count(method, "/hang") == 1
    store = LocalStore(tmp_path / "sessions")
    (session_id,) = store.session_ids()
    outcome = resume(session_id, RunOptions(), store=store)
    assert outcome.status == "completed"
    (result,) = tool_results(store, session_id)
    assert recorder.count(method, "/hang") == sent_after_resume, (result, recorder.requests)
    if sent_after_resume == 1:
        assert result["status"] == "error" and "outcome unknown" in result_text(result)
    else:
        assert result["status"] == "success"
