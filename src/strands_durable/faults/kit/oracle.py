"""The oracle: what "identical" means (docs/contract.md), where two views first differ (readably), and counters that
prove no committed work was redone.

`comparable(state)` is the normalised view two runs must share: every unit's response, every agent history
after `history.normalize`, artifact digests, final status and token totals of committed turns.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import threading
from collections.abc import AsyncIterator
from typing import Any

from strands_durable.crashpoints import ToolKey
from strands_durable.history import normalize, validate
from strands_durable.store.state import SessionState


def comparable(state: SessionState) -> dict[str, Any]:
    return {
        "status": state.status,
        "units": {unit: record.get("response") for unit, record in sorted(state.units.items())},
        "histories": {key: normalize(conv.messages) for key, conv in sorted(state.conversations.items())},
        "artifacts": {path: info["sha256"] for path, info in sorted(state.artifacts.items())},
        "tokens": state.usage(),
    }


MISSING = object()


def first_differing_values(expected: Any, actual: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first place two JSON-like values differ: (path, expected value, actual value), or None when equal.
    A key or item present on one side only gives `MISSING` on the other."""
    if type(expected) is not type(actual):
        return path or "<root>", expected, actual
    if isinstance(expected, dict):
        for key in list(expected) + [k for k in actual if k not in expected]:
            if key not in actual or key not in expected:
                return f"{path}.{key}", expected.get(key, MISSING), actual.get(key, MISSING)
            found = first_differing_values(expected[key], actual[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list):
        for index, (left, right) in enumerate(zip(expected, actual, strict=False)):
            found = first_differing_values(left, right, f"{path}[{index}]")
            if found:
                return found
        if len(expected) != len(actual):
            return path, expected, actual
        return None
    return None if expected == actual else (path, expected, actual)


def first_difference(expected: Any, actual: Any) -> str | None:
    """A one-line description of the first place two comparable views differ, or None when equal."""
    found = first_differing_values(expected, actual)
    if found is None:
        return None
    path, left, right = found
    if right is MISSING:
        return f"{path}: missing in the resumed run"
    if left is MISSING:
        return f"{path}: extra in the resumed run ({_brief(right)})"
    if isinstance(left, list) and isinstance(right, list) and len(left) != len(right):
        return f"{path}: expected {len(left)} items, got {len(right)}"
    return f"{path}: expected {_brief(left)}, got {_brief(right)}"


def readable_difference(expected: Any, actual: Any, *, context: int = 2, limit: int = 40) -> str | None:
    """Where two views first differ, with a unified diff of the differing values (golden -> resumed)."""
    found = first_differing_values(expected, actual)
    if found is None:
        return None
    path, left, right = found

    def lines(value: Any) -> list[str]:
        if value is MISSING:
            return ["<missing>"]
        text = value if isinstance(value, str) else json.dumps(value, indent=1, ensure_ascii=False, default=str)
        return text.splitlines() or [""]

    diff = list(difflib.unified_diff(lines(left), lines(right), "golden", "resumed", n=context, lineterm=""))
    if len(diff) > limit:
        diff = [*diff[:limit], f"... ({len(diff) - limit} more diff lines)"]
    return f"{path}\n" + "\n".join("    " + line for line in diff)


def _brief(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def stored_violations(state: SessionState, *, mode: str = "stored") -> list[str]:
    problems = []
    for key, conv in sorted(state.conversations.items()):
        problems += history_violations(key, conv.messages, mode=mode)
    return problems


def history_violations(key: str, messages: list[dict[str, Any]], *, mode: str = "stored") -> list[str]:
    return [
        f"{key}: {v.rule} at message {v.message_index}: {v.message}"
        for v in validate(messages, mode=mode)  # type: ignore[arg-type]
    ]


def committed_request_digests(state: SessionState) -> set[str]:
    """Digests of the requests whose answers are committed (the history before each stored assistant turn)."""
    digests = set()
    for conv in state.conversations.values():
        for index, message in enumerate(conv.messages):
            if message.get("role") == "assistant":
                digests.add(_digest(conv.messages[:index]))
    return digests


def committed_tool_ids(state: SessionState) -> set[str]:
    """toolUseIds whose results are committed: in the tool-result journal or in a stored results message."""
    ids: set[str] = set()
    for conv in state.conversations.values():
        ids.update(conv.tool_results)
        for message in conv.messages:
            for block in message.get("content", ()):
                if "toolResult" in block:
                    ids.add(block["toolResult"]["toolUseId"])
    return ids


def committed_tool_keys(state: SessionState) -> set[ToolKey]:
    """The tool calls (conversation key, toolUseId) whose results are committed: in the tool-result journal or in
    a stored results message."""
    keys: set[ToolKey] = set()
    for key, conv in state.conversations.items():
        keys.update((key, tool_use_id) for tool_use_id in conv.tool_results)
        for message in conv.messages:
            keys.update((key, b["toolResult"]["toolUseId"]) for b in message.get("content", ()) if "toolResult" in b)
    return keys


def _digest(messages: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(normalize(messages), sort_keys=True).encode()).hexdigest()


class RequestLog:
    """Every model request of a run, by the digest of its normalised messages (thread-safe)."""

    def __init__(self) -> None:
        self.digests: list[str] = []
        self._lock = threading.Lock()

    def record(self, messages: list[dict[str, Any]]) -> None:
        digest = _digest(messages)
        with self._lock:
            self.digests.append(digest)


def counting_model(model: Any, log: RequestLog) -> Any:
    """Wrap a strands Model so every request is recorded in `log` before it is answered."""
    return _counting_class()(model, log)


@functools.cache
def _counting_class() -> type:
    """The wrapper's class, made once (strands is imported only when a fault run builds a model; a class made per
    call cost a chaos run ~1% of its time in `ABCMeta.__new__`)."""
    from strands_durable.models.wrapping import WrappedModel

    class _Counting(WrappedModel):
        def __init__(self, inner: Any, log: RequestLog) -> None:
            super().__init__(inner)
            self.log = log

        def stream(  # type: ignore[override]
            self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
        ) -> AsyncIterator[Any]:
            """Records the request as the SDK asks for the stream, and hands it the wrapped model's own stream
            (no generator of its own re-yielding every event)."""
            self.log.record(list(messages))
            return super().stream(messages, tool_specs, system_prompt, **kwargs)

    return _Counting
