"""Network tools under chaos: `--strands-record` runs an HTTP executor against a loopback server once and stores
its responses in the cassette (keyed by tool name and canonical input, the secret it sent never stored); later
chaos runs replay them with the server stopped; a spec with network tools and no cassette is reported as not
explorable on its own summary line (never passed); a call missing from the cassette is a divergence."""

from __future__ import annotations

import json
import threading
from http.server import ThreadingHTTPServer

import pytest

from tests.plugin.support import summary
from tests.tools.test_http_executors import Recorder, _handler
from tests.tools.test_mcp_tools import effects, mcp_http_server

SECRET = "s3cr3t-network-cassette-token"
SPEC = """
version: 0
name: loopback-http
runtime:
  provider: scripted
  model_id: {script}
env:
  secrets:
    - {{name: API_TOKEN, source: env, key: NET_CASSETTE_TOKEN}}
tools:
  http_executors:
    - id: api
      base_url: {base_url}
      headers: {{Authorization: "Bearer ${{API_TOKEN}}"}}
agents:
  fetcher:
    prompt: You look things up through the api tool.
    tools: [api]
pattern:
  type: chain
  config:
    steps:
      - agent: fetcher
        input: "Look up the inventory, then order what is missing."
"""
SCRIPT = [  # the recording's "real" model: a fixed script (chaos replays its answers from the cassette)
    {"tool_calls": [{"name": "api", "input": {"method": "GET", "path": "/items?kind=bolts"}}]},
    {"tool_calls": [{"name": "api", "input": {"method": "PUT", "path": "/orders/7", "json_data": {"bolts": 40}}}]},
    "Ordered 40 bolts.",
]
ARGS = ("--strands-chaos", "--strands-chaos-max-points=12", "--strands-chaos-schedules=1", "-p", "no:cacheprovider")
NOT_EXPLORABLE = "strands-chaos: 1 workflows not explorable (network tools without a cassette): net.strands.yaml"


def write_script(pytester: pytest.Pytester) -> str:
    path = pytester.path / "script.json"
    path.write_text(json.dumps(SCRIPT))
    return str(path)


class LoopbackServer:
    """The HTTP executors' test server (tests/tools) on a free loopback port, stoppable mid-test."""

    def __init__(self) -> None:
        self.recorder = Recorder()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.recorder))
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self) -> None:
        self.recorder.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    loopback = LoopbackServer()
    yield loopback
    if loopback.thread.is_alive():
        loopback.stop()


def test_network_tool_responses_are_recorded_then_replayed_offline(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, server: LoopbackServer
) -> None:
    monkeypatch.setenv("NET_CASSETTE_TOKEN", SECRET)
    spec = pytester.path / "net.strands.yaml"
    cassette = pytester.path / "net.strands.yaml.cassette.json"
    spec.write_text(SPEC.format(base_url=server.base_url, script=write_script(pytester)))

    recorded = pytester.runpytest_inprocess(*ARGS, "--strands-record")
    seen = len(server.recorder.requests)
    assert [r[:2] for r in server.recorder.requests] == [("GET", "/items?kind=bolts"), ("PUT", "/orders/7")]
    assert all(r[2]["Authorization"] == f"Bearer {SECRET}" for r in server.recorder.requests)  # the secret was sent
    assert recorded.ret == pytest.ExitCode.OK, recorded.stdout.str()[-3000:]
    body = json.loads(cassette.read_text())
    assert len(body["tools"]) == 2 and len(body["responses"]) == 3
    assert SECRET not in cassette.read_text()  # sent, echoed by the server, redacted before it was stored
    assert "Bearer [REDACTED]" in json.dumps(body["tools"])
    totals = summary(recorded)
    assert totals["divergences"] == 0 and totals["points"] >= 10

    replayed = pytester.runpytest_inprocess(*ARGS)  # server still up: replay must not reach it
    assert len(server.recorder.requests) == seen
    assert replayed.ret == pytest.ExitCode.OK and summary(replayed) == totals

    server.stop()  # only the cassette can answer now
    offline = pytester.runpytest_inprocess(*ARGS)
    assert offline.ret == pytest.ExitCode.OK, offline.stdout.str()[-3000:]
    assert summary(offline) == totals and NOT_EXPLORABLE not in offline.stdout.str()

    body["tools"].pop(sorted(body["tools"])[0])  # a call the recording never made
    cassette.write_text(json.dumps(body))
    missing = pytester.runpytest_inprocess(*ARGS)
    assert missing.ret == pytest.ExitCode.TESTS_FAILED
    assert "of tool 'api' is not in the cassette net.strands.yaml.cassette.json" in missing.stdout.str()
    assert summary(missing)["divergences"] >= 1


def test_network_tools_without_a_cassette_are_not_explorable_never_passed(
    pytester: pytest.Pytester, server: LoopbackServer
) -> None:
    spec = pytester.path / "net.strands.yaml"
    spec.write_text(SPEC.format(base_url=server.base_url, script=write_script(pytester)))
    result = pytester.runpytest_inprocess(*ARGS, "--strands-chaos-report=chaos.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert f"record one with: pytest --strands-chaos --strands-record {spec}" in out
    assert "network tools api and no cassette net.strands.yaml.cassette.json" in out
    lines = out.splitlines()
    contract = "strands-chaos: 0 crash points explored in 0 workflows (0 site kinds), 0 divergences, "
    assert lines[lines.index(NOT_EXPLORABLE) - 1].startswith(contract)  # the summary line CI greps, unchanged, above it
    assert summary(result) == {"points": 0, "workflows": 0, "sites": 0, "divergences": 0, "invalid": 0, "seed": 0}
    report = json.loads((pytester.path / "chaos.json").read_text())
    assert report["not_explorable"] == ["net.strands.yaml"] and report["workflows"] == []
    assert not server.recorder.requests


NETWORK_SPEC_TOOLS = """
tools:
  http_executors:
    - {id: api, base_url: "http://127.0.0.1:9"}
  mcp:
    - {id: remote, url: "http://127.0.0.1:9/mcp"}
    - {id: local, command: python, args: [server.py]}
"""


def test_every_kind_of_network_tool_is_found_and_only_they_get_the_cassette(tmp_path) -> None:
    from strands_durable.faults.suite import network_tool_names
    from strands_durable.runner.native_tools import native_tools
    from strands_durable.runner.tools import DirectNetwork, ToolResolver
    from strands_durable.spec import load_spec
    from tests.tools.support import scripted_spec

    spec = scripted_spec(tmp_path, "[web_fetch, calculator, api, duckduckgo_search]", NETWORK_SPEC_TOOLS)
    assert network_tool_names(spec) == ["web_fetch", "api", "duckduckgo_search", "remote"]  # not the stdio server

    plain = scripted_spec(tmp_path, "[web_fetch, calculator, api]", NETWORK_SPEC_TOOLS.split("  mcp:")[0], name="p")
    wrapped: list[str] = []

    class Network(DirectNetwork):
        def wrap(self, tool):
            wrapped.append(tool.tool_name)
            return tool

    resolver = ToolResolver(
        load_spec(plain), provider="synthetic", native=native_tools(), network=True, network_tools=Network()
    )
    names = [tool.tool_name for tool in resolver.for_agent("worker").tools]
    assert names == ["web_fetch", "calculator", "api"] and wrapped == ["web_fetch", "api"]


MCP_SPEC = """
version: 0
name: loopback-mcp
runtime: {{provider: scripted, model_id: {script}}}
tools:
  mcp:
    - {{id: remote, url: "{url}"}}
agents:
  worker:
    prompt: You look things up.
pattern:
  type: chain
  config:
    steps:
      - agent: worker
        input: Look up k1.
"""


def test_an_mcp_server_over_http_is_recorded_then_replayed_without_connecting(pytester: pytest.Pytester) -> None:
    script = pytester.path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "lookup", "input": {"key": "k1"}}]}, "Found it."]))
    log = pytester.path / "effects.log"
    spec = pytester.path / "mcp.strands.yaml"
    with mcp_http_server(log) as url:
        spec.write_text(MCP_SPEC.format(script=script, url=url))
        recorded = pytester.runpytest_inprocess(*ARGS, "--strands-record")
    assert recorded.ret == pytest.ExitCode.OK, recorded.stdout.str()[-3000:]
    assert effects(log)[1:] == ["lookup k1"]  # one real call, by the recording
    body = json.loads((pytester.path / "mcp.strands.yaml.cassette.json").read_text())
    assert [t["spec"]["name"] for t in body["mcp_servers"]["remote"]] == ["lookup", "send_message"]
    assert "value-of-k1" in json.dumps(body["tools"])

    replayed = pytester.runpytest_inprocess(*ARGS)  # the server is gone: listing and calls come from the cassette
    assert replayed.ret == pytest.ExitCode.OK, replayed.stdout.str()[-3000:]
    assert summary(replayed) == summary(recorded) and summary(replayed)["points"] >= 8


def test_a_crash_inside_a_non_idempotent_call_under_a_cassette_leaves_the_recording_honestly(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, server: LoopbackServer
) -> None:
    """A POST (non-idempotent) interrupted mid-call resumes with "outcome unknown", a result the recording never
    saw: what the model is asked next is answered by the synthetic model instead of failing as a cassette miss,
    and that run is held to the contract's rule (docs/contract.md#what-identical-means: one effect at most, the
    synthesized result, valid and completed)."""
    monkeypatch.setenv("NET_CASSETTE_TOKEN", SECRET)
    script = [SCRIPT[0], {"tool_calls": [{"name": "api", "input": {"method": "POST", "path": "/orders"}}]}, SCRIPT[2]]
    (pytester.path / "script.json").write_text(json.dumps(script))
    spec = pytester.path / "net.strands.yaml"
    spec.write_text(SPEC.format(base_url=server.base_url, script=pytester.path / "script.json"))
    recorded = pytester.runpytest_inprocess(*ARGS, "--strands-record")
    assert recorded.ret == pytest.ExitCode.OK, recorded.stdout.str()[-3000:]
    server.stop()

    unknown = "step[0]:fetcher/turn[1]/tool[0]:api/tool.executed"  # the POST ran, its result was not committed
    report = pytester.path / "chaos.json"
    chosen = pytester.runpytest_inprocess(
        "--strands-chaos",
        "--strands-chaos-schedules=0",
        f"--strands-chaos-report={report}",
        "-p",
        "no:cacheprovider",
        "-k",
        "turn[1]/tool[0]:api",
    )
    out = chosen.stdout.str()
    assert chosen.ret == pytest.ExitCode.OK, out[-3000:]
    assert summary(chosen)["divergences"] == 0 and summary(chosen)["points"] >= 5
    items = {item.get("point"): item["outcome"] for item in json.loads(report.read_text())["items"]}
    assert items[unknown] == "passed" and items[unknown.replace("tool.executed", "tool.before")] == "passed"
