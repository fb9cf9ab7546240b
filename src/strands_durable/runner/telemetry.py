"""`telemetry.otel`: a run's OpenTelemetry trace, exported as strands-cli exports it.

A root span `execute.<pattern>` per run (or resume), a span per agent unit inside it, and inside those the Strands
SDK's own agent, model-call and tool spans. `endpoint` exports over OTLP (gRPC on port 4317, else HTTP/protobuf to
`<endpoint>/v1/traces`), no endpoint prints the spans on stderr; `service_name` (default `strands-durable`) and
`sample_ratio` (a whole trace is kept or dropped) apply per run. Before export, secrets (`env.secrets` values, and
environment variables named like API keys, tokens or passwords) are replaced by `[REDACTED]`; with
`telemetry.redact`, tool inputs (`tool_inputs`, default on) and outputs (`tool_outputs`) of tool spans are replaced
and PII is redacted from every text (as with `security.guardrails.pii_redaction`). Artifacts' `TRACE` is the
trace document strands-cli writes (this process's finished spans, scrubbed the same way).

Resume: work committed before is not traced again: a finished unit is an event `unit_skipped` on the new root
span (which has `session.resumed = true`), a committed model turn is never requested and a committed tool result is
restored from the journal without a tool span. OpenTelemetry is imported only when a spec asks for it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.util
import json
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from strands_durable.runner.run_secrets import secret_values

DEFAULT_SERVICE_NAME = "strands-durable"
TOOL_PLACEHOLDER = "***REDACTED***"
GRPC_PORT = 4317
# where the SDK puts a tool's input and output on its `execute_tool` spans (both semantic-convention versions)
_TOOL_INPUTS = {("", "gen_ai.tool.call.arguments"), ("gen_ai.tool.message", "content")}
_TOOL_INPUTS |= {("gen_ai.client.inference.operation.details", "gen_ai.input.messages")}
_TOOL_OUTPUTS = {("", "gen_ai.tool.call.result"), ("gen_ai.choice", "message")}
_TOOL_OUTPUTS |= {("gen_ai.client.inference.operation.details", "gen_ai.output.messages")}


def wants_telemetry(spec: Any) -> bool:
    return spec.telemetry is not None and spec.telemetry.otel is not None


def _exporter_package(endpoint: str) -> tuple[str, str]:
    """(module, PyPI package) of the OTLP exporter an endpoint needs."""
    if urlsplit(endpoint).port == GRPC_PORT:
        return "opentelemetry.exporter.otlp.proto.grpc", "opentelemetry-exporter-otlp-proto-grpc"
    return "opentelemetry.exporter.otlp.proto.http", "opentelemetry-exporter-otlp-proto-http"


def _exporter(otel: Any, warn: Any) -> Any:
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    endpoint = otel.endpoint
    if not endpoint:
        return ConsoleSpanExporter(out=sys.stderr)
    module, package = _exporter_package(endpoint)
    if importlib.util.find_spec(module) is None:  # strands-cli also falls back to the console
        warn(f"telemetry.otel.endpoint {endpoint} needs the package {package}; spans are printed on stderr instead")
        return ConsoleSpanExporter(out=sys.stderr)
    if module.endswith("grpc"):
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        return GrpcExporter(endpoint=endpoint, insecure=urlsplit(endpoint).scheme != "https")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    url = urlsplit(endpoint)
    path = url.path if url.path not in ("", "/") else "/v1/traces"
    return OTLPSpanExporter(endpoint=urlunsplit((url.scheme, url.netloc, path, url.query, "")))


class _Dispatcher:
    """The one span processor this process adds to the global tracer provider: hands each finished span to the
    run whose trace it belongs to (several runs may share a process: tests, the in-process chaos explorer)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: dict[int, Any] = {}

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        return None

    def on_end(self, span: Any) -> None:
        run = self.runs.get(span.context.trace_id)
        if run is not None:
            run.on_end(span)

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


_DISPATCHER: _Dispatcher | None = None
_INSTALL_LOCK = threading.Lock()


def _dispatcher() -> _Dispatcher:
    """Install the dispatcher in the global tracer provider (an SDK provider, set here when there is none yet)."""
    global _DISPATCHER
    with _INSTALL_LOCK:
        if _DISPATCHER is None:
            from opentelemetry import trace
            from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

            provider = trace.get_tracer_provider()
            if not isinstance(provider, TracerProvider):
                trace.set_tracer_provider(TracerProvider())
                provider = trace.get_tracer_provider()
            dispatcher = type("SpanDispatcher", (_Dispatcher, SpanProcessor), {})()  # OpenTelemetry loaded late
            provider.add_span_processor(dispatcher)  # type: ignore[attr-defined]
            _DISPATCHER = dispatcher
        return _DISPATCHER


class _Scrubbed:
    """A span exporter that exports copies of spans with this run's resource, secrets and redactions applied."""

    def __init__(self, inner: Any, resource: Any, secrets: list[str], redact: Any, pii: bool) -> None:
        self.inner = inner
        self.resource = resource
        self.secrets = secrets
        self.tool_inputs = bool(redact is not None and redact.tool_inputs)
        self.tool_outputs = bool(redact is not None and redact.tool_outputs)
        self.pii = pii or redact is not None
        self.stopped = False

    def _text(self, value: Any) -> Any:
        from strands_durable.history.pii import redact_pii
        from strands_durable.history.secrets import redact_secrets

        if isinstance(value, str):
            value = redact_secrets(value, self.secrets)
            return redact_pii(value) if self.pii else value
        if isinstance(value, (list, tuple)):
            return type(value)(self._text(item) for item in value)
        return value

    def _attributes(self, attributes: Any, tool_span: bool, event: str) -> dict[str, Any]:
        cleaned = {}
        for key, value in (attributes or {}).items():
            hidden = tool_span and (
                (self.tool_inputs and (event, key) in _TOOL_INPUTS)
                or (self.tool_outputs and (event, key) in _TOOL_OUTPUTS)
            )
            cleaned[key] = TOOL_PLACEHOLDER if hidden else self._text(value)
        return cleaned

    def copy(self, span: Any) -> Any:
        from opentelemetry.sdk.trace import Event, ReadableSpan

        tool_span = span.name.startswith("execute_tool")
        events = [
            Event(e.name, self._attributes(e.attributes, tool_span, e.name), timestamp=e.timestamp) for e in span.events
        ]
        return ReadableSpan(
            name=span.name,
            context=span.context,
            parent=span.parent,
            resource=self.resource,
            attributes=self._attributes(span.attributes, tool_span, ""),
            events=events,
            links=span.links,
            kind=span.kind,
            status=span.status,
            start_time=span.start_time,
            end_time=span.end_time,
            instrumentation_scope=span.instrumentation_scope,
        )

    def export(self, spans: Sequence[Any]) -> Any:
        return self.inner.export([self.copy(span) for span in spans])

    def shutdown(self) -> None:
        if not self.stopped:
            self.stopped = True
            self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        flush = getattr(self.inner, "force_flush", None)
        return bool(flush(timeout_millis)) if flush is not None else True


def _time(ns: int | None) -> str:
    if ns is None:
        return ""
    return dt.datetime.fromtimestamp(ns / 1e9, tz=dt.timezone.utc).isoformat(timespec="milliseconds")


def _span_document(span: Any) -> dict[str, Any]:
    """A finished span as strands-cli's trace document lists it."""
    duration = (span.end_time - span.start_time) / 1e6 if span.end_time and span.start_time else 0
    return {
        "name": span.name,
        "start_time": _time(span.start_time),
        "end_time": _time(span.end_time),
        "duration_ms": duration,
        "attributes": dict(span.attributes or {}),
        "events": [
            {"name": e.name, "timestamp": _time(e.timestamp), "attributes": dict(e.attributes or {})}
            for e in span.events
        ],
        "status": {"status_code": span.status.status_code.name, "description": span.status.description},
    }


class RunTelemetry:
    """One run's trace: its root span, its units' spans, and the processor that exports them."""

    def __init__(
        self, spec: Any, *, session_id: str, resumed: bool, exporter: Any = None, warn: Any = lambda _: None
    ) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.trace.sampling import TraceIdRatioBased

        otel = spec.telemetry.otel
        self.spec = spec
        self.session_id = session_id
        self.resumed = resumed
        self.dispatcher = _dispatcher()
        from opentelemetry import trace

        self.tracer = trace.get_tracer("strands_durable")
        resource = Resource.create({"service.name": otel.service_name or DEFAULT_SERVICE_NAME})
        self.exporter = _Scrubbed(
            exporter or _exporter(otel, warn), resource, secret_values(spec), spec.telemetry.redact, spec.redacts_pii
        )
        self.processor = BatchSpanProcessor(self.exporter)
        ratio = 1.0 if otel.sample_ratio is None else otel.sample_ratio
        self.bound = TraceIdRatioBased.get_bound_for_rate(ratio)
        self.limit = TraceIdRatioBased.TRACE_ID_LIMIT
        self.root: Any = None
        self.root_context: Any = None
        self.collected: list[dict[str, Any]] = []  # the scrubbed spans of this process's part, for `TRACE`
        self.max_spans = int(os.environ.get("STRANDS_MAX_TRACE_SPANS", "1000"))
        self.evicted = 0

    def on_end(self, span: Any) -> None:
        self.processor.on_end(span)
        copy = self.exporter.copy(span)
        with self.dispatcher.lock:
            self.collected.append(_span_document(copy))
            if len(self.collected) > self.max_spans:  # strands-cli's bound: the oldest span goes
                self.collected.pop(0)
                self.evicted += 1

    def trace_json(self) -> str:
        """strands-cli's `TRACE` document: the spans finished so far in this process (scrubbed), as JSON."""
        with self.dispatcher.lock:
            spans = list(self.collected)
        trace_id = format(self.root.get_span_context().trace_id, "032x") if self.root is not None else "unknown"
        document = {
            "trace_id": trace_id,
            "spec_name": self.spec.name,
            "pattern": self.spec.pattern.type,
            "duration_ms": round(sum(span["duration_ms"] for span in spans), 3),
            "span_count": len(spans),
            "evicted_count": self.evicted,
            "spans": spans,
        }
        return json.dumps(document, indent=2, ensure_ascii=False, default=str)

    @contextlib.contextmanager
    def workflow(self) -> Iterator[None]:
        """The run's root span, current while the pattern runs and its artifacts are written."""
        from opentelemetry import trace

        spec = self.spec
        attributes = {
            "spec.name": spec.name,
            "spec.version": str(spec.version),
            "pattern.type": spec.pattern.type,
            "runtime.provider": spec.runtime.provider,
            "runtime.model_id": spec.runtime.model_id or "default",
            "agent.count": len(spec.agents),
            "session.id": self.session_id,
            "session.resumed": self.resumed,
        }
        with self.tracer.start_as_current_span(f"execute.{spec.pattern.type}", attributes=attributes) as root:
            trace_id = root.get_span_context().trace_id
            if trace_id & self.limit < self.bound:  # sampled: this run's spans go to its exporter
                with self.dispatcher.lock:
                    self.dispatcher.runs[trace_id] = self
            self.root, self.root_context = root, trace.set_span_in_context(root)
            root.add_event("execution_start", {"spec_name": spec.name})
            yield
            root.add_event("execution_complete", {"spec_name": spec.name})

    @contextlib.contextmanager
    def unit(self, unit: str, label: str, agent_id: str) -> Iterator[None]:
        """A unit's span, child of the root span whichever thread runs the unit."""
        attributes = {"unit.id": unit, "unit.label": label, "agent.id": agent_id}
        with self.tracer.start_as_current_span(f"unit {unit}", context=self.root_context, attributes=attributes):
            yield

    def unit_skipped(self, unit: str, label: str) -> None:
        if self.root is not None:
            self.root.add_event("unit_skipped", {"unit.id": unit, "unit.label": label})

    def close(self) -> None:
        """Export what is pending (bounded), then stop; an unreachable endpoint does not hold the run up."""
        if self.root is not None:
            with self.dispatcher.lock:
                self.dispatcher.runs.pop(self.root.get_span_context().trace_id, None)
        self.processor.force_flush(5000)
        self.exporter.shutdown()  # first: ends an OTLP exporter's retry wait, which the processor would join
        with contextlib.suppress(Exception):
            self.processor.shutdown()


__all__ = ["RunTelemetry", "secret_values", "wants_telemetry"]
