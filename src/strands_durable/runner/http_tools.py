"""HTTP executor tools (`tools.http_executors`) as strands-cli builds them: one tool per executor, named by its id,
taking `method`, `path`, `json_data` and `headers_override`, answering `{status, headers, body}`.

They run inside the durable tool path like every tool (each response is committed, a committed one is replayed).
`${NAME}` in a header is a secret read from the environment at call time (`env.secrets` maps NAME to the
variable): it is sent, never journaled, and any echo of it in a response is replaced by `[REDACTED]` before the
result is committed. Idempotency is per call: POST and PATCH are not idempotent (RFC 9110 counts GET, HEAD,
OPTIONS, PUT and DELETE as idempotent), unless the executor's `x-idempotent` says otherwise.
"""

from __future__ import annotations

import os
import re
from typing import Any

from strands_durable.agent.durable import CALL_IDEMPOTENCY_ATTRIBUTE

METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")
NON_IDEMPOTENT_METHODS = frozenset({"POST", "PATCH"})
DEFAULT_TIMEOUT_S = 30
MAX_BODY_CHARS = 100_000
REDACTED = "[REDACTED]"
_PLACEHOLDER = re.compile(r"\$\{([^}]+)\}")


class SecretMissing(ValueError):
    """A header names a secret whose environment variable is not set."""


def secret_variables(spec: Any) -> dict[str, str]:
    """Placeholder name -> environment variable, from `env.secrets` (a name without an entry is its own variable)."""
    secrets = spec.env.secrets if spec.env is not None else []
    return {secret.name or secret.key: secret.key for secret in secrets if secret.source == "env"}


def resolve_headers(spec: Any, headers: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """(headers with every `${NAME}` replaced from the environment, the secret values used)."""
    variables = secret_variables(spec)
    used: list[str] = []

    def value_of(match: re.Match[str]) -> str:
        variable = variables.get(match[1], match[1])
        value = os.environ.get(variable)
        if value is None:
            raise SecretMissing(f"secret ${{{match[1]}}} needs the environment variable {variable}, which is not set")
        used.append(value)
        return value

    return {key: _PLACEHOLDER.sub(value_of, text) for key, text in headers.items()}, used


def redact(value: Any, secrets: list[str]) -> Any:
    """`value` with every occurrence of a secret (in any string inside it) replaced by [REDACTED]."""
    if isinstance(value, str):
        for secret in sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True):
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {redact(k, secrets): redact(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, secrets) for v in value]
    return value


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
    path = str(tool_input.get("path") or "")
    if not path:
        raise ValueError("Missing required 'path' parameter")
    if method not in METHODS:
        raise ValueError(f"Unsupported method {method!r}; use one of {', '.join(METHODS)}")
    headers, secrets = resolve_headers(spec, dict(config.headers))
    overrides = tool_input.get("headers_override") or {}
    headers.update({str(k): str(v) for k, v in overrides.items()})
    try:
        with httpx.Client(base_url=config.base_url, timeout=_timeout_s(config), headers=headers) as client:
            response = client.request(method, path, json=tool_input.get("json_data"))
    except httpx.TimeoutException as exc:
        raise ValueError(redact(f"HTTP request timed out: {exc}", secrets)) from None
    except httpx.HTTPError as exc:
        raise ValueError(redact(f"HTTP request failed: {exc}", secrets)) from None
    answer = {"status": response.status_code, "headers": dict(response.headers), "body": response.text[:MAX_BODY_CHARS]}
    return redact(answer, secrets)
