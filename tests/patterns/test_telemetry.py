"""`telemetry.otel` with effect: a run's trace (root span, a span per unit, the Strands SDK's agent, model and tool
spans inside) reaches the configured exporter with the spec's service name, secrets never leave the process, tool
inputs are redacted as `telemetry.redact` says, and a resume does not trace committed work again (skipped units are
events, committed tool results are restored without a tool span). Real agents on the scripted model; spans are
caught by the OpenTelemetry SDK's in-memory exporter and by a loopback OTLP/HTTP receiver."""

from __future__ import annotations

import http.server
import json
import os
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from strands import tool

from strands_durable import CrashPoints, InjectedCrash, LocalStore, RunOptions, resume, run_workflow
from tests.tools.support import call

SECRET = "tok-3f9a1c77e2b54d0f"
SPEC = """\
version: 0
name: traced
runtime: {provider: scripted}
env:
  secrets: [{source: env, key: TRACED_SERVICE_TOKEN}]
telemetry:
  otel: {service_name: traced-svc%(endpoint)s}
  redact: {tool_inputs: true}
agents:
  worker: {prompt: You look things up., tools: [leaky, calculator]}
pattern:
  type: chain
  config:
    steps:
      - {agent: worker, input: "Look it up."}
      - {agent: worker, input: "And add."}
outputs:
  artifacts:
    - {path: trace.json, from: "{{ TRACE }}"}
"""
SCRIPT = {
    "worker": [
        call("leaky", topic="weather"),
        "Looked up.",
        {
            "tool_calls": [
                {"name": "calculator", "input": {"expression": "40+2"}},
                {"name": "calculator", "input": {"expression": "6*7"}},
            ]
        },
        "It is 42.",
    ]
}


@tool
def leaky(topic: str) -> str:
    """A tool whose answer carries the service token (as a careless API might echo it).

    Args:
        topic: What to look up.
    """
    return f"{topic}: sunny (auth {os.environ['TRACED_SERVICE_TOKEN']})"


def _spec(tmp_path: Path, endpoint: str = "") -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC % {"endpoint": f", endpoint: '{endpoint}'" if endpoint else ""}, encoding="utf-8")
    return path


def _options(root: Path, exporter: Any = None, points: CrashPoints | None = None) -> RunOptions:
    return RunOptions(
        out_dir=root / "out",
        scripts=SCRIPT,
        extra_tools={"leaky": leaky},
        trace_exporter=exporter,
        crash_points=points or CrashPoints(),
    )


def _texts(span: Any) -> list[str]:
    values = list((span.attributes or {}).values())
    for event in span.events:
        values += list((event.attributes or {}).values())
    return [str(value) for value in values]


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACED_SERVICE_TOKEN", SECRET)


def test_a_run_exports_units_model_and_tool_spans_with_no_secret_and_redacted_tool_inputs(tmp_path):
    exporter = InMemorySpanExporter()
    outcome = run_workflow(_spec(tmp_path), _options(tmp_path, exporter), store=LocalStore(tmp_path / "sessions"))
    assert outcome.status == "completed"
    spans = exporter.get_finished_spans()
    by_name = {span.name: span for span in spans}
    root = by_name["execute.chain"]
    assert root.attributes["session.id"] == outcome.session_id and root.attributes["session.resumed"] is False
    assert {span.resource.attributes["service.name"] for span in spans} == {"traced-svc"}
    units = [by_name["unit step[0]"], by_name["unit step[1]"]]
    assert all(unit.parent.span_id == root.context.span_id for unit in units)
    agents = [span for span in spans if span.name.startswith("invoke_agent")]
    assert sorted(a.parent.span_id for a in agents) == sorted(u.context.span_id for u in units)
    assert any(span.name == "chat" for span in spans)  # the SDK's model calls
    tool_spans = [span for span in spans if span.name.startswith("execute_tool")]
    assert {span.name for span in tool_spans} == {"execute_tool leaky", "execute_tool calculator"}
    assert len({span.context.trace_id for span in spans}) == 1
    leaks = [(span.name, text) for span in spans for text in _texts(span) if SECRET in text]
    assert not leaks
    assert any("[REDACTED]" in text for span in spans for text in _texts(span))  # the echo was there, scrubbed
    for span in tool_spans:
        inputs = [e.attributes["content"] for e in span.events if e.name == "gen_ai.tool.message"]
        assert inputs == ["***REDACTED***"], span.name
    # the artifacts' TRACE is strands-cli's trace document of the spans finished so far, scrubbed the same way
    text = (tmp_path / "out" / "trace.json").read_text(encoding="utf-8")
    document = json.loads(text)
    assert document["trace_id"] == format(root.context.trace_id, "032x") and document["spec_name"] == "traced"
    assert {"unit step[0]", "unit step[1]", "execute_tool leaky"} <= {span["name"] for span in document["spans"]}
    assert document["span_count"] == len(document["spans"]) and SECRET not in text


def test_a_resume_traces_only_new_work_and_no_span_for_what_the_journal_restores(tmp_path):
    points = CrashPoints()
    target = "step[1]:worker/turn[0]/tool[0]:calculator/tool.committed"

    def crash(point: Any) -> None:
        if point.id == target:
            raise InjectedCrash(point)

    points.subscribe(crash)
    store = LocalStore(tmp_path / "sessions")
    first = InMemorySpanExporter()
    with pytest.raises(InjectedCrash):
        run_workflow(_spec(tmp_path), _options(tmp_path, first, points), store=store)
    (session_id,) = store.session_ids()
    again = InMemorySpanExporter()
    outcome = resume(session_id, _options(tmp_path, again), store=LocalStore(tmp_path / "sessions"))
    assert outcome.status == "completed"
    spans = again.get_finished_spans()
    names = [span.name for span in spans]
    root = next(span for span in spans if span.name == "execute.chain")
    assert root.attributes["session.resumed"] is True
    assert "unit step[0]" not in names and "execute_tool leaky" not in names  # committed: not traced again
    assert [e.attributes["unit.id"] for e in root.events if e.name == "unit_skipped"] == ["step[0]"]
    # the crash came between the two calls of one turn: the first is restored from the journal without a span
    state = LocalStore(tmp_path / "sessions").load(session_id)
    turn = next(m for m in state.conversations["worker"].messages if len(m["content"]) == 2)
    committed, pending = (block["toolUse"]["toolUseId"] for block in turn["content"])
    before = [s for s in first.get_finished_spans() if s.name == "execute_tool calculator"]
    after = [s for s in spans if s.name == "execute_tool calculator"]
    assert [s.attributes["gen_ai.tool.call.id"] for s in before] == [committed]
    assert [s.attributes["gen_ai.tool.call.id"] for s in after] == [pending]


class _Receiver(http.server.BaseHTTPRequestHandler):
    bodies: ClassVar[list[tuple[str, bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.bodies.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return None


def test_an_endpoint_receives_the_trace_over_otlp_http(tmp_path):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        outcome = run_workflow(_spec(tmp_path, endpoint), _options(tmp_path), store=LocalStore(tmp_path / "sessions"))
    finally:
        server.shutdown()
        server.server_close()
    assert outcome.status == "completed"
    assert _Receiver.bodies and {path for path, _ in _Receiver.bodies} == {"/v1/traces"}
    names, services = [], set()
    for _, body in _Receiver.bodies:
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            services |= {a.value.string_value for a in resource_spans.resource.attributes if a.key == "service.name"}
            names += [span.name for scope in resource_spans.scope_spans for span in scope.spans]
        assert SECRET.encode() not in body
    assert services == {"traced-svc"}
    assert {"execute.chain", "unit step[0]", "unit step[1]", "execute_tool calculator"} <= set(names)
