"""A declared secret never reaches stored text, in any form a real echo takes: a server echoing it JSON-escaped with
escaped slashes, URL-encoded or as a Python repr; a token with a trailing newline (refused before use, naming the
secret, never its value); a Python tool's error holding it. Checked in every file of the session, the export and
a recorded cassette with the chaos judge's own check (`find_secret_echoes`)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

import pytest

from strands_durable import LocalStore
from strands_durable.faults.kit.cassette import Cassette
from strands_durable.history.secrets import find_secret_echoes
from strands_durable.operations import export_session
from tests.tools.support import call, http_spec, result_text, run_script, tool_results

SECRET = "sk-live/Ab12+Zq9"


@pytest.fixture
def echo_server():
    """Answers with the Authorization header it received, echoed in the forms a real API's JSON or error uses."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            token = self.headers.get("Authorization", "").removeprefix("Bearer ")
            seen.append(self.path)
            body = json.dumps({"escaped": token}).replace("/", "\\/")  # PHP's and Java's JSON encoders do this
            body += f" url={quote(token, safe='')} repr={token!r} {json.dumps({'plain': token})}"
            payload = body.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    httpd.shutdown()
    httpd.server_close()


def stored_texts(store: LocalStore, session_id: str) -> dict[str, bytes]:
    """Every file of the session (journal, message files, session.json, ...) and its export."""
    root = store.directory_of(session_id)
    texts = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
    texts["export"] = json.dumps(export_session(store, session_id)).encode()
    return texts


def test_echoes_in_json_with_escaped_slashes_url_encoding_and_repr_are_never_stored(tmp_path, echo_server, monkeypatch):
    base_url, seen = echo_server
    monkeypatch.setenv("HTTP_TEST_TOKEN", SECRET)
    outcome, store = run_script(http_spec(tmp_path, base_url), tmp_path, [call("api", path="/echo")], network=True)
    assert seen == ["/echo"]  # the secret was sent
    (result,) = tool_results(store, outcome.session_id)
    assert result["status"] == "success" and result_text(result).count("[REDACTED]") == 4
    assert find_secret_echoes(stored_texts(store, outcome.session_id), {"API_TOKEN": SECRET}) == []


def test_a_secret_with_a_trailing_newline_is_refused_by_name_and_never_stored(tmp_path, echo_server, monkeypatch):
    base_url, seen = echo_server
    monkeypatch.setenv("HTTP_TEST_TOKEN", SECRET + "\n")  # a token read from a file, newline and all
    outcome, store = run_script(http_spec(tmp_path, base_url), tmp_path, [call("api", path="/echo")], network=True)
    (result,) = tool_results(store, outcome.session_id)
    assert result["status"] == "error"
    assert result_text(result) == (
        "secret ${API_TOKEN} (environment variable HTTP_TEST_TOKEN) holds a line break or another control "
        "character; it is not sent"
    )
    assert seen == []  # nothing was sent
    assert find_secret_echoes(stored_texts(store, outcome.session_id), {"API_TOKEN": SECRET + "\n"}) == []


def test_a_python_tool_error_holding_a_secret_is_redacted_in_every_stored_file(tmp_path, echo_server, monkeypatch):
    base_url, _ = echo_server
    monkeypatch.setenv("HTTP_TEST_TOKEN", SECRET)
    (tmp_path / "leaky_tools.py").write_text(
        "import os\nfrom strands import tool\n\n\n@tool\ndef leak() -> str:\n"
        '    """Fail with the token in the message."""\n'
        "    raise RuntimeError(f\"auth failed for {os.environ['HTTP_TEST_TOKEN']!r} at /x?t=\" "
        "+ os.environ['HTTP_TEST_TOKEN'].replace('/', '%2F').replace('+', '%2B'))\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = http_spec(tmp_path, base_url, extra="  python:\n    - leaky_tools.leak\n")
    spec.write_text(spec.read_text().replace("You use tools.", "You use tools.\n    tools: [leak]"))
    outcome, store = run_script(spec, tmp_path, [call("leak")])
    (result,) = tool_results(store, outcome.session_id)
    assert result["status"] == "error" and "auth failed for '[REDACTED]' at /x?t=[REDACTED]" in result_text(result)
    assert find_secret_echoes(stored_texts(store, outcome.session_id), {"API_TOKEN": SECRET}) == []


def test_a_recorded_cassette_holds_no_form_of_a_secret(tmp_path):
    cassette = Cassette(tmp_path / "spec.yaml.cassette.json", secrets=(SECRET,))
    cassette.record("k1", [{"contentBlockDelta": {"delta": {"text": json.dumps(SECRET).replace("/", "\\/")}}}])
    cassette.record_tool("t1", {"status": "success", "content": [{"text": f"token {SECRET!r}"}]})
    cassette.save()
    assert find_secret_echoes({"cassette": cassette.path.read_bytes()}, {"API_TOKEN": SECRET}) == []
    assert "[REDACTED]" in cassette.path.read_text()
