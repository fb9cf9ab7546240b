"""Cassettes: a real provider's answers recorded once, keyed by the normalised request, replayed offline.

A cassette is one JSON file next to its spec (`<spec file>.cassette.json`). It holds, for each request digest
(`ModelRequest.digest`: messages without ids' randomness or metadata, system prompt, tool specs, tool choice), the
Strands stream events the provider answered with. It never holds a request's text, headers or credentials, only
digests and answers. Replay is offline; a request the cassette does not hold raises `CassetteMiss`, which the
chaos explorer reports as a divergence (the workflow asked something the recording never asked).

It also holds the results of the tools that reached the network (HTTP executors, MCP servers over HTTP, network
native tools), keyed by the digest of the tool's name and canonical input: `NetworkCassette` wraps each such
tool so that recording runs it and stores its result, and replay answers from the cassette without running it
(an MCP server over HTTP is not even connected: the cassette also lists its tools).
What is stored is the tool's result (an HTTP executor's is already redacted of the secrets it sent), never its
input or the tool-use id. Answers and results are recorded with the run's secrets redacted (every form
`history/secrets.py` names), as the session stores them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from strands.models import Model
from strands.types.events import ToolResultEvent
from strands.types.tools import AgentTool

from strands_durable.agent.durable import CALL_IDEMPOTENCY_ATTRIBUTE
from strands_durable.errors import WorkflowFailed
from strands_durable.history.secrets import redact_secrets
from strands_durable.models.digest import canonical_json, sha256_hex
from strands_durable.models.request import ModelRequest
from strands_durable.store.fileops import FileOps

CASSETTE_VERSION = 1


class CassetteMiss(WorkflowFailed):
    """A model request the cassette has no answer for."""


def cassette_path(spec_path: Path) -> Path:
    return spec_path.with_name(spec_path.name + ".cassette.json")


def request_key(messages: Any, tool_specs: Any, system_prompt: Any, kwargs: dict[str, Any]) -> str:
    request = ModelRequest.build(
        list(messages),
        tool_specs,
        system_prompt,
        system_prompt_content=kwargs.get("system_prompt_content"),
        tool_choice=kwargs.get("tool_choice"),
    )
    return request.digest()


class Cassette:
    """Recorded answers by request digest; thread-safe (concurrent units record and replay from threads)."""

    def __init__(
        self,
        path: Path,
        responses: dict[str, list[dict[str, Any]]] | None = None,
        tools: dict[str, dict[str, Any]] | None = None,
        servers: dict[str, list[dict[str, Any]]] | None = None,
        *,
        secrets: tuple[str, ...] = (),
    ) -> None:
        self.path = path
        self.secrets = secrets  # redacted from what is recorded
        self.responses: dict[str, list[dict[str, Any]]] = dict(responses or {})
        self.tools: dict[str, dict[str, Any]] = dict(tools or {})  # tool-call digest -> its result without the id
        self.servers: dict[str, list[dict[str, Any]]] = dict(servers or {})  # MCP-over-HTTP server -> its tools
        self.tool_misses: list[str] = []  # replayed tool calls it had no result for (the model reads an error)
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: Path) -> Cassette:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("version") != CASSETTE_VERSION:
            raise ValueError(f"{path}: not a version {CASSETTE_VERSION} strands-chaos cassette")
        return cls(path, data.get("responses") or {}, data.get("tools") or {}, data.get("mcp_servers") or {})

    def save(self) -> None:
        body = {
            "version": CASSETTE_VERSION,
            "responses": dict(sorted(self.responses.items())),
            "tools": dict(sorted(self.tools.items())),
            "mcp_servers": dict(sorted(self.servers.items())),
        }
        data = json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        FileOps().write_atomic(self.path, data.encode("utf-8"))

    def record(self, key: str, events: list[dict[str, Any]]) -> None:
        events = redact_secrets(events, self.secrets)
        with self._lock:
            self.responses[key] = events

    def answer(self, key: str, agent_id: str) -> list[dict[str, Any]]:
        with self._lock:
            events = self.responses.get(key)
        if events is None:
            cause = f" (a network tool call missed it first: {self.tool_misses[-1]})" if self.tool_misses else ""
            raise CassetteMiss(
                f"model request {key[:12]} of agent {agent_id!r} is not in the cassette {self.path.name}; "
                f"the workflow asked something the recording never asked (record again with --strands-record){cause}"
            )
        return events

    def record_tool(self, key: str, result: dict[str, Any]) -> None:
        result = redact_secrets(result, self.secrets)
        with self._lock:
            self.tools[key] = result

    def tool_answer(self, key: str, tool_name: str) -> dict[str, Any]:
        with self._lock:
            result = self.tools.get(key)
        if result is None:  # the SDK turns this into the tool's error result; the model's next request misses too
            miss = f"network tool call {key[:12]} of tool {tool_name!r} is not in the cassette {self.path.name}"
            with self._lock:
                self.tool_misses.append(miss)
            raise CassetteMiss(
                f"{miss}; the workflow called it with an input the recording never used "
                "(record again with --strands-record)"
            )
        return json.loads(json.dumps(result))

    def record_server(self, server_id: str, listing: list[dict[str, Any]]) -> None:
        with self._lock:
            self.servers[server_id] = listing

    def server(self, server_id: str) -> list[dict[str, Any]]:
        with self._lock:
            listing = self.servers.get(server_id)
        if listing is None:
            raise CassetteMiss(
                f"MCP server {server_id!r} (over HTTP) is not in the cassette {self.path.name}; "
                "record again with --strands-record"
            )
        return listing

    def recording_model(self, model: Any, agent_id: str) -> Any:
        """Wrap a real strands Model: every answer is stored under its request's digest."""
        return _CassetteModel(self, agent_id, inner=model)

    def replaying_model(self, agent_id: str) -> Any:
        """A strands Model answering only from the cassette."""
        return _CassetteModel(self, agent_id, inner=None)


class _CassetteModel(Model):
    """Replays from the cassette (`inner` None) or records what `inner`, a real model, answers."""

    def __init__(self, cassette: Cassette, agent_id: str, *, inner: Any) -> None:
        self.cassette = cassette
        self.agent_id = agent_id
        self.inner = inner
        self.config: dict[str, Any] = {"model_id": "cassette"}

    def update_config(self, **config: Any) -> None:
        if self.inner is not None:
            self.inner.update_config(**config)
        self.config.update(config)

    def get_config(self) -> Any:
        return self.inner.get_config() if self.inner is not None else self.config

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise WorkflowFailed("structured output is not supported with cassettes")

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        key = request_key(messages, tool_specs, system_prompt, kwargs)
        if self.inner is None:
            for event in self.cassette.answer(key, self.agent_id):
                yield json.loads(json.dumps(event))
            return
        events: list[dict[str, Any]] = []
        async for event in self.inner.stream(messages, tool_specs, system_prompt, **kwargs):
            events.append(json.loads(json.dumps(event, default=str)))
            yield event
        self.cassette.record(key, events)


def answers_unknown_outcome(messages: Any) -> bool:
    """Whether a request's history holds a synthesized "outcome unknown" result (a non-idempotent call a crash
    interrupted): such a request, and every later one, is one the recording never saw."""
    from strands_durable.history import SYNTHESIZED_RESULT_TEXT

    for message in messages or ():
        for block in message.get("content", ()):
            result = block.get("toolResult") if isinstance(block, dict) else None
            unknown = result and result.get("status") == "error"
            if unknown and any(part.get("text") == SYNTHESIZED_RESULT_TEXT for part in result.get("content", ())):
                return True
    return False


def off_the_record(replaying: Any, fallback: Any, *, after_unknown_only: bool = False) -> Any:
    """A replaying model for a run that left the recording: after a crash made a non-idempotent call's outcome
    unknown, the run goes on with its synthesized "outcome unknown" result, which the recording never saw, so
    the requests that follow are ones the provider was never asked. Those `fallback` (the synthetic model)
    answers; the contract (docs/contract.md#what-identical-means) does not compare what follows such a point with
    the golden run, only its validity, its completion and that the call took effect at most once. Requests the
    cassette holds are still replayed. `after_unknown_only`: a miss is answered by `fallback` only when the request
    holds such a result (the Python-agent path, which learns of the unknown outcome only when its resume
    synthesizes it); any other miss still fails."""
    from strands_durable.models.wrapping import WrappedModel

    if not isinstance(replaying, _CassetteModel):
        return replaying  # not answering from a cassette: nothing to leave

    class _OffTheRecord(WrappedModel):
        async def stream(
            self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
        ) -> AsyncIterator[Any]:
            try:
                key = request_key(messages, tool_specs, system_prompt, kwargs)
                replaying.cassette.answer(key, replaying.agent_id)
            except CassetteMiss:
                if after_unknown_only and not answers_unknown_outcome(messages):
                    raise
                source = fallback
            else:
                source = replaying
            async for event in source.stream(messages, tool_specs, system_prompt, **kwargs):
                yield event

    return _OffTheRecord(replaying)


def recording_factory(cassette: Cassette, spec_path: Path) -> Any:
    """A model factory for the chaos explorer: each agent's real provider (from the spec), recorded."""
    from strands_durable.models.providers import build_model
    from strands_durable.spec import load_spec

    spec = load_spec(spec_path)

    def factory(*, agent_id: str, model_id: Any, runtime: Any) -> Any:
        provider = spec.agents[agent_id].provider or spec.runtime.provider
        return cassette.recording_model(build_model(provider, model_id=model_id, runtime=runtime), agent_id)

    return factory


def replaying_factory(cassette: Cassette) -> Any:
    """A model factory for the chaos explorer answering every agent from the cassette (offline)."""

    def factory(*, agent_id: str, model_id: Any, runtime: Any) -> Any:
        return cassette.replaying_model(agent_id)

    return factory


def tool_key(tool_name: str, tool_input: Any) -> str:
    """The cassette key of one tool call: its name and canonical input (key order and ids never matter)."""
    return sha256_hex("tool", tool_name, canonical_json(tool_input))


class NetworkCassette:
    """How the runner's network tools reach the network under chaos (runner/tools.py's `DirectNetwork`
    contract): recording runs each tool and stores its result (and each MCP-over-HTTP server's tool list);
    replay answers both from the cassette and never connects."""

    def __init__(self, cassette: Cassette, *, recording: bool) -> None:
        self.cassette = cassette
        self.recording = recording

    def wrap(self, tool: Any) -> Any:
        return _CassetteTool(self.cassette, tool, recording=self.recording)

    def server_tools(self, server_id: str, connect: Any) -> list[Any]:
        if self.recording:
            listed = list(connect())
            self.cassette.record_server(server_id, [_listing(tool) for tool in listed])
            return [self.wrap(tool) for tool in listed]
        return [
            _CassetteTool(self.cassette, _Listed(entry), recording=False) for entry in self.cassette.server(server_id)
        ]


def _listing(tool: Any) -> dict[str, Any]:
    """What replay needs of an MCP tool: its name, spec, type and whether a call may be re-run."""
    judge = getattr(tool, CALL_IDEMPOTENCY_ATTRIBUTE, None)
    spec = json.loads(json.dumps(tool.tool_spec, default=str))
    return {"spec": spec, "type": str(tool.tool_type), "idempotent": judge is None or bool(judge({}))}


class _Listed:
    """An MCP tool as the cassette lists it (replay never calls it)."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.tool_spec = entry["spec"]
        self.tool_name = entry["spec"]["name"]
        self.tool_type = entry.get("type", "python")
        setattr(self, CALL_IDEMPOTENCY_ATTRIBUTE, lambda _input, value=bool(entry["idempotent"]): value)


class _CassetteTool(AgentTool):
    """A network tool under a cassette: same name, spec and idempotency as the tool it wraps."""

    def __init__(self, cassette: Cassette, inner: Any, *, recording: bool) -> None:
        super().__init__()
        self.cassette = cassette
        self.inner = inner
        self.recording = recording
        judge = getattr(inner, CALL_IDEMPOTENCY_ATTRIBUTE, None)
        if judge is not None:
            setattr(self, CALL_IDEMPOTENCY_ATTRIBUTE, judge)

    @property
    def tool_name(self) -> str:
        return str(self.inner.tool_name)

    @property
    def tool_spec(self) -> Any:
        return self.inner.tool_spec

    @property
    def tool_type(self) -> str:
        return str(self.inner.tool_type)

    async def stream(self, tool_use: Any, invocation_state: dict[str, Any], **kwargs: Any) -> AsyncIterator[Any]:
        key = tool_key(self.tool_name, tool_use.get("input") or {})
        if not self.recording:
            answer = self.cassette.tool_answer(key, self.tool_name)
            yield ToolResultEvent({"toolUseId": tool_use["toolUseId"], **answer})
            return
        async for event in self.inner.stream(tool_use, invocation_state, **kwargs):
            if isinstance(event, ToolResultEvent):  # stored before it is handed on: the caller may stop reading
                result = event.tool_result
                stored = {k: v for k, v in result.items() if k != "toolUseId"}  # MCP adds structuredContent
                self.cassette.record_tool(key, json.loads(json.dumps(stored, default=str)))
            yield event
