"""A deterministic OpenAI-compatible chat-completions server on 127.0.0.1, for driving real providers offline.

`with OpenAICompatServer() as server:` serves `POST {server.base_url}/chat/completions` on an ephemeral
loopback port from a background thread and stops on exit. Answers come from an `AnswerPolicy` (the synthetic
model's by default) applied to the request converted back to Strands' message shape, so they are a pure
function of the request, tool calls and contracts included. Streaming replies are SSE chunks: a role chunk,
content or `tool_calls` deltas, a chunk with `finish_reason` "stop" or "tool_calls", a chunk with `usage`,
then `data: [DONE]`. Every request body is recorded for assertions.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..models.answer import Answer, AnswerPolicy
from ..models.request import ModelRequest
from ..models.synthetic_policy import SyntheticPolicy

_TEXT_PIECE = 48


def _part_text(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type") == "text":
            blocks.append({"text": part.get("text", "")})
        else:
            blocks.append({"openai_part": part})
    return blocks


def request_from_openai(body: Mapping[str, Any]) -> ModelRequest:
    """A chat-completions body as a `ModelRequest`; consecutive tool messages become one user message."""
    system: list[str] = []
    messages: list[dict[str, Any]] = []
    for message in body.get("messages") or []:
        role = message.get("role")
        if role in ("system", "developer"):
            system.extend(b["text"] for b in _part_text(message.get("content")) if "text" in b)
        elif role == "tool":
            result = {"toolUseId": message.get("tool_call_id"), "content": _part_text(message.get("content"))}
            if messages and messages[-1]["role"] == "user" and all("toolResult" in b for b in messages[-1]["content"]):
                messages[-1]["content"].append({"toolResult": result})
            else:
                messages.append({"role": "user", "content": [{"toolResult": result}]})
        elif role == "assistant":
            content = _part_text(message.get("content"))
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                try:
                    arguments = json.loads(function.get("arguments") or "{}")
                except json.JSONDecodeError:
                    arguments = {"__raw__": function.get("arguments")}
                content.append(
                    {
                        "toolUse": {
                            "toolUseId": call.get("id"),
                            "name": function.get("name"),
                            "input": arguments,
                        }
                    }
                )
            messages.append({"role": "assistant", "content": content})
        else:
            messages.append({"role": "user", "content": _part_text(message.get("content"))})
    choice = body.get("tool_choice")
    tools = [] if choice == "none" else body.get("tools") or []
    specs = [
        {
            "name": tool["function"]["name"],
            "description": tool["function"].get("description", ""),
            "inputSchema": {"json": tool["function"].get("parameters") or {"type": "object"}},
        }
        for tool in tools
        if isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping)
    ]
    tool_choice: dict[str, Any] | None = None
    if choice == "required":
        tool_choice = {"any": {}}
    elif isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        tool_choice = {"tool": {"name": choice["function"].get("name")}}
    return ModelRequest.build(messages, specs, "\n".join(system) if system else None, tool_choice=tool_choice)


def _usage(answer: Answer) -> dict[str, int]:
    return {
        "prompt_tokens": answer.usage.input_tokens,
        "completion_tokens": answer.usage.output_tokens,
        "total_tokens": answer.usage.total_tokens,
    }


def _tool_calls(answer: Answer) -> list[dict[str, Any]]:
    return [
        {
            "id": call.tool_use_id,
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.input, sort_keys=True)},
        }
        for call in answer.tool_calls
    ]


def sse_chunks(answer: Answer, *, completion_id: str, model: str) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` objects streaming `answer`."""
    base = {"id": completion_id, "object": "chat.completion.chunk", "created": 0, "model": model}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    text = answer.text or ""
    chunks.extend(chunk({"content": text[i : i + _TEXT_PIECE]}) for i in range(0, len(text), _TEXT_PIECE))
    for index, call in enumerate(_tool_calls(answer)):
        head = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        chunks.append(chunk({"tool_calls": [head]}))
        chunks.append(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": call["function"]["arguments"]}}]})
        )
    chunks.append(chunk({}, "tool_calls" if answer.tool_calls else "stop"))
    chunks.append({**base, "choices": [], "usage": _usage(answer)})
    return chunks


def completion(answer: Answer, *, completion_id: str, model: str) -> dict[str, Any]:
    """The non-streaming `chat.completion` object for `answer`."""
    message: dict[str, Any] = {"role": "assistant", "content": answer.text}
    if answer.tool_calls:
        message["tool_calls"] = _tool_calls(answer)
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if answer.tool_calls else "stop"}],
        "usage": _usage(answer),
    }


class OpenAICompatServer:
    """A loopback chat-completions server answering from `policy` (default: the synthetic policy, `seed`)."""

    def __init__(self, *, policy: AnswerPolicy | None = None, seed: int = 0) -> None:
        self.policy: AnswerPolicy = policy or SyntheticPolicy(seed=seed)
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._sent: list[tuple[dict[str, str], bytes]] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`, the value for the OpenAI client's `base_url`."""
        if self._httpd is None:
            raise RuntimeError("the server is not running; use it as a context manager")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of the chat-completions requests received, in order."""
        with self._lock:
            return list(self._requests)

    @property
    def sent(self) -> list[tuple[dict[str, str], bytes]]:
        """Each chat-completions request as it arrived: its headers (lower-case names) and its body's bytes."""
        with self._lock:
            return list(self._sent)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._requests)

    def _record(self, body: dict[str, Any], headers: dict[str, str], raw: bytes) -> int:
        with self._lock:
            self._requests.append(body)
            self._sent.append((headers, raw))
            return len(self._requests)

    def start(self) -> OpenAICompatServer:
        if self._httpd is not None:
            raise RuntimeError("the server is already running")
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="openai-compat-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> OpenAICompatServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _handler_for(server: OpenAICompatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str, kind: str) -> None:
            self._json(status, {"error": {"message": message, "type": kind, "code": None, "param": None}})

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._json(
                    200,
                    {"object": "list", "data": [{"id": "synthetic", "object": "model", "owned_by": "local"}]},
                )
            else:
                self._error(404, f"no route {self.path}", "not_found")

        def do_POST(self) -> None:
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._error(404, f"no route {self.path}", "not_found")
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                body = json.loads(raw or b"{}")
                if not isinstance(body, dict):
                    raise ValueError("the request body must be a JSON object")
                request = request_from_openai(body)
            except (ValueError, KeyError, TypeError) as exc:
                self._error(400, f"invalid request: {exc}", "invalid_request_error")
                return
            number = server._record(body, {name.lower(): value for name, value in self.headers.items()}, raw)
            try:
                answer = server.policy.answer(request)
            except Exception as exc:  # the policy's own error (e.g. a script ran out) becomes an API error
                self._error(500, f"{type(exc).__name__}: {exc}", "server_error")
                return
            completion_id = f"chatcmpl-{number}"
            model = str(body.get("model") or "synthetic")
            if not body.get("stream"):
                self._json(200, completion(answer, completion_id=completion_id, model=model))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in sse_chunks(answer, completion_id=completion_id, model=model):
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler
