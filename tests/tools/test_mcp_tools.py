"""MCP tools through the SDK's MCPClient, against our own MCP server (tests/tools/mcp_server.py) over stdio and over
streamable HTTP on loopback: calls are committed, the stdio server is started and stopped with the run, HTTP
needs --network offline, and a run killed mid-call resumes by the tool's annotations: a read-only call is made
again, a destructive one is answered "outcome unknown" (the server saw it once)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from strands_durable import LocalStore, RunOptions, resume
from strands_durable.errors import Unsupported
from tests.tools.support import call, result_text, run_and_kill, run_script, scripted_spec, tool_results

SERVER = Path(__file__).with_name("mcp_server.py")


def effects(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def mcp_spec(tmp_path: Path, server: str, *, script: list | None = None) -> Path:
    return scripted_spec(tmp_path, None, f"tools:\n  mcp:\n    - {server}\n", script=script)


def stdio_server(log: Path) -> str:
    return f'{{id: test, command: "{sys.executable}", args: ["{SERVER}", stdio], env: {{MCP_TEST_EFFECTS: "{log}"}}}}'


def gone(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_stdio_tools_are_called_committed_and_the_server_stops_with_the_run(tmp_path):
    log = tmp_path / "effects.log"
    spec = mcp_spec(tmp_path, stdio_server(log))
    outcome, store = run_script(spec, tmp_path, [call("lookup", key="k1"), call("send_message", text="hi")])
    looked, sent = tool_results(store, outcome.session_id)
    assert result_text(looked) == "value-of-k1" and result_text(sent) == "sent hi"
    started, *calls = effects(log)
    assert calls == ["lookup k1", "send hi"]
    assert gone(int(started.split()[1])), "the stdio server outlived the run"


@contextlib.contextmanager
def mcp_http_server(log):
    """tests/tools/mcp_server.py over streamable HTTP on a free loopback port; yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "MCP_TEST_EFFECTS": str(log)}
    child = subprocess.Popen([sys.executable, str(SERVER), "http", str(port)], env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        child.terminate()
        child.wait(10)


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    log = tmp_path_factory.mktemp("mcp-http") / "effects.log"
    with mcp_http_server(log) as url:
        yield url, log


def test_http_tools_need_network_offline_and_are_committed_with_it(tmp_path, http_server):
    url, log = http_server
    spec = mcp_spec(tmp_path, f'{{id: remote, url: "{url}"}}')
    with pytest.raises(Unsupported, match=r"MCP server 'remote'.*--network"):
        run_script(spec, tmp_path, [])
    outcome, store = run_script(spec, tmp_path, [call("lookup", key="over-http")], network=True)
    (result,) = tool_results(store, outcome.session_id)
    assert result_text(result) == "value-of-over-http" and "lookup over-http" in effects(log)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tool", "argument", "calls_after_resume", "answer"),
    [("send_message", "text", 1, "outcome unknown"), ("lookup", "key", 2, "value-of-hang")],
)
def test_a_run_killed_mid_call_resumes_by_the_tool_annotations(tmp_path, tool, argument, calls_after_resume, answer):
    log = tmp_path / "effects.log"
    spec = mcp_spec(tmp_path, stdio_server(log), script=[call(tool, **{argument: "hang"})])
    command = [sys.executable, "-m", "strands_durable", "run", str(spec), "--sessions-dir", str(tmp_path / "s")]
    marker = Path(f"{log}.hang")
    run_and_kill([*command, "--out", str(tmp_path / "out")], marker.exists)
    server_pid = int(effects(log)[0].split()[1])
    with contextlib.suppress(ProcessLookupError):  # the orphaned server is still inside the hanging call
        os.kill(server_pid, signal.SIGKILL)
    store = LocalStore(tmp_path / "s")
    (session_id,) = store.session_ids()
    outcome = resume(session_id, RunOptions(), store=store)
    assert outcome.status == "completed"
    made = [line for line in effects(log) if not line.startswith("started")]
    assert len(made) == calls_after_resume, (effects(log), tool_results(store, session_id))
    (result,) = tool_results(store, session_id)
    assert answer in result_text(result)
