"""HTTP executor tools (`tools.http_executors`) as strands-cli builds them: one tool per executor, named by its id,
taking `method`, `path`, `json_data` and `headers_override`, answering `{status, headers, body}`.

They run inside the durable tool path like every tool (each response is committed, a committed one is replayed).
`${NAME}` in a header is a secret read from the environment at call time (`env.secrets` maps NAME to the
variable): it is sent, never journaled, and any echo of it in a response (in every form `history/secrets.py`
names) is replaced by `[REDACTED]` before the result is committed; a secret with a line break or control character,
or too short to redact, is refused before anything is sent. Requests stay on `base_url`: the model's `path` must be
relative, and every request (redirect hops included, checked by an httpx request hook before it is sent) must keep
the base URL's scheme, host and port and stay under its path; anything else is the tool's error naming the rule.
Idempotency is per call: POST and PATCH are not idempotent (RFC 9110 counts GET, HEAD, OPTIONS, PUT and DELETE as
idempotent), unless the executor's `x-idempotent` says otherwise.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import unquote

from strands_durable.agent.durable import CALL_IDEMPOTENCY_ATTRIBUTE
from strands_durable.history.secrets import MIN_SECRET_CHARS, redact_secrets
from strands_durable.runner.run_secrets import secret_variables

METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")
NON_IDEMPOTENT_METHODS = frozenset({"POST", "PATCH"})
DEFAULT_TIMEOUT_S = 30
MAX_BODY_CHARS = 100_000
_PLACEHOLDER = re.compile(r"\$\{([^}]+)\}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


class SecretMissing(ValueError):
    """A header names a secret whose environment variable is not set."""


def resolve_headers(spec: Any, headers: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """(headers with every `${NAME}` replaced from the environment, the secret values used). A secret that could
    not be sent as it is (a line break or another control character) or that is too short to redact from stored
    text is refused, naming the secret and its variable, never its value."""
    variables = secret_variables(spec)
    used: list[str] = []

    def value_of(match: re.Match[str]) -> str:
        variable = variables.get(match[1], match[1])
        value = os.environ.get(variable)
        named = f"secret ${{{match[1]}}} (environment variable {variable})"
        if value is None:
            raise SecretMissing(f"{named} is not set")
        if _CONTROL.search(value):
            raise ValueError(f"{named} holds a line break or another control character; it is not sent")
        if len(value.strip()) < MIN_SECRET_CHARS:
            raise ValueError(
                f"{named} is shorter than {MIN_SECRET_CHARS} characters, too short to keep out of stored text"
            )
        used.append(value)
        return value

    return {key: _PLACEHOLDER.sub(value_of, text) for key, text in headers.items()}, used


class OriginRule(ValueError):
    """A request that would leave its executor's `base_url` (scheme, host, port and path prefix)."""


def _origin_check(base_url: str) -> Any:
    """`request -> None` raising OriginRule for a request (the first or a redirect hop) that leaves `base_url`:
    another scheme, host or port, a path outside the base path, or a path segment that decodes to `.`/`..` or
    holds an encoded slash (which a server could read as leaving the prefix)."""
    import httpx

    base = httpx.URL(base_url)
    prefix = base.path if base.path.endswith("/") else base.path + "/"

    def check(request: Any) -> None:
        url = request.url
        if (url.scheme, url.host, url.port) != (base.scheme, base.host, base.port):
            raise OriginRule(
                f"request to {url.scheme}://{url.host}{f':{url.port}' if url.port else ''} refused: an HTTP executor "
                f"only reaches its base_url's origin ({base.scheme}://{base.netloc.decode()}); its headers and "
                "secrets are never sent elsewhere"
            )
        raw = url.raw_path.split(b"?", 1)[0].decode("ascii", errors="replace")
        inside = raw == prefix.rstrip("/") or raw.startswith(prefix) or prefix == "/"
        segments = [unquote(segment) for segment in raw.split("/")]
        if not inside or any(s in (".", "..") or "/" in s or "\\" in s for s in segments):
            raise OriginRule(
                f"request path {raw!r} refused: an HTTP executor stays under its base_url's path {prefix!r}"
            )

    return check


def _relative_path(path: str) -> str:
    """The model's `path`, refused (OriginRule) when it names another origin: an absolute URL or `//host`."""
    stripped = path.strip()
    before_query = re.split(r"[?#]", stripped, maxsplit=1)[0]  # a query may carry a URL as a value
    if "://" in before_query or stripped.startswith(("//", "\\\\", "/\\", "\\/")) or _SCHEME.match(stripped):
        raise OriginRule(
            f"path {path!r} refused: the path must be relative to the executor's base_url (absolute URLs and "
            "//host are never requested)"
        )
    return stripped


def _description(config: Any) -> str:
    parts = [config.description or f"HTTP executor for {config.base_url}"]
    if config.authentication_info:
        parts.append(f"\n\nAuthentication: {config.authentication_info}")
    if config.response_format:
        parts.append(f"\nResponse format: {config.response_format}")
    if config.common_endpoints:
        parts.append("\n\nCommon endpoints:")
        parts += [f"\n- {e.method or 'GET'} {e.path}: {e.description}" for e in config.common_endpoints]
    if config.examples:
        parts.append("\n\nExamples:")
        for i, example in enumerate(config.examples, 1):
            parts.append(f"\n{i}. {example.description or f'Example {i}'}")
            parts.append(f"   Method: {example.method or 'GET'}, Path: {example.path or ''}")
            if example.json_data is not None:
                parts.append(f"   Body: {example.json_data}")
    return "".join(parts)


def _timeout_s(config: Any) -> float:
    if config.timeout_ms is not None:
        return config.timeout_ms / 1000
    return float(config.timeout or DEFAULT_TIMEOUT_S)


def call_idempotent(config: Any) -> Any:
    """`input -> bool`: whether one call of this executor may be run again after a crash hid its outcome."""

    def judge(tool_input: dict[str, Any]) -> bool:
        if config.idempotent is not None:
            return bool(config.idempotent)
        return str(tool_input.get("method") or "GET").upper() not in NON_IDEMPOTENT_METHODS

    return judge


def http_executor_tool(spec: Any, config: Any) -> Any:
    """The Strands tool of one HTTP executor (no connection is made until it is called)."""
    from strands.tools.tools import PythonAgentTool

    tool_spec = {
        "name": config.id,
        "description": _description(config),
        "inputSchema": {
            "json": {
                "type": "object",
                "properties": {
                    "method": {"type": "string", "enum": list(METHODS), "default": "GET", "description": "HTTP method"},
                    "path": {"type": "string", "description": "Request path (relative to the base URL)"},
                    "json_data": {"type": "object", "description": "Optional JSON body for POST/PUT/PATCH"},
                    "headers_override": {"type": "object", "description": "Optional headers merged over the base"},
                },
                "required": ["path"],
            }
        },
    }

    def run(tool_use: dict[str, Any], **_: Any) -> dict[str, Any]:
        tool_use_id = tool_use.get("toolUseId", "")
        try:
            payload = _request(spec, config, tool_use.get("input") or {})
        except ValueError as exc:
            return {"toolUseId": tool_use_id, "status": "error", "content": [{"text": str(exc)}]}
        return {"toolUseId": tool_use_id, "status": "success", "content": [{"json": payload}]}

    tool = PythonAgentTool(config.id, tool_spec, run)
    setattr(tool, CALL_IDEMPOTENCY_ATTRIBUTE, call_idempotent(config))
    return tool


def _request(spec: Any, config: Any, tool_input: dict[str, Any]) -> dict[str, Any]:
    """One request; its answer with every secret redacted. A failure is a ValueError (the tool's error result)."""
    import httpx

    method = str(tool_input.get("method") or "GET").upper()
    path = _relative_path(str(tool_input.get("path") or ""))
    if not path:
        raise ValueError("Missing required 'path' parameter")
    if method not in METHODS:
        raise ValueError(f"Unsupported method {method!r}; use one of {', '.join(METHODS)}")
    headers, secrets = resolve_headers(spec, dict(config.headers))
    overrides = tool_input.get("headers_override") or {}
    headers.update({str(k): str(v) for k, v in overrides.items()})
    for name, value in headers.items():
        if _CONTROL.search(name) or _CONTROL.search(value):
            raise ValueError(f"header {_CONTROL.sub('?', name)!r} holds a line break or another control character")
    check = _origin_check(config.base_url)
    try:
        with httpx.Client(
            base_url=config.base_url,
            timeout=_timeout_s(config),
            headers=headers,
            follow_redirects=True,
            event_hooks={"request": [check]},  # every hop, redirects included, before anything is sent
        ) as client:
            response = client.request(method, path, json=tool_input.get("json_data"))
    except OriginRule as exc:
        raise ValueError(redact_secrets(str(exc), secrets)) from None
    except httpx.TimeoutException as exc:
        raise ValueError(redact_secrets(f"HTTP request timed out: {exc}", secrets)) from None
    except httpx.HTTPError as exc:
        raise ValueError(redact_secrets(f"HTTP request failed: {exc}", secrets)) from None
    answer = {"status": response.status_code, "headers": dict(response.headers), "body": response.text[:MAX_BODY_CHARS]}
    return redact_secrets(answer, secrets)
