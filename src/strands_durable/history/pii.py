"""PII redaction of text and messages (`security.guardrails.pii_redaction`): e-mail addresses, payment card
numbers, US social security numbers and phone numbers are replaced by `***REDACTED***`, strands-cli's patterns and
placeholder. Pure functions: a message is never changed in place unless the caller asks (`redact_message_in_place`).
"""

from __future__ import annotations

import copy
import re
from typing import Any

PII_PLACEHOLDER = "***REDACTED***"

_PATTERNS = (
    re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"),  # e-mail
    re.compile(r"\b\d{4}[- ]?\d{4}[- ]?\d{4}[- ]?\d{4}\b"),  # payment card
    re.compile(r"\b\d{3}-\d{2}-\d{4}\b"),  # US SSN
    re.compile(r"\b\d{3}[-.]?\d{3}[-.]?\d{4}\b"),  # phone
)


def redact_pii(value: Any) -> Any:
    """`value` with PII replaced in every string inside it (dicts, lists); other values as they are."""
    if isinstance(value, str):
        for pattern in _PATTERNS:
            value = pattern.sub(PII_PLACEHOLDER, value)
        return value
    if isinstance(value, dict):
        return {key: redact_pii(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_pii(item) for item in value]
    return value


def redact_tool_result(result: dict[str, Any]) -> dict[str, Any]:
    """A tool result whose content (text and JSON) has PII redacted; id and status kept."""
    redacted = copy.deepcopy(result)
    redacted["content"] = redact_pii(redacted.get("content", []))
    return redacted


def redact_message_in_place(message: dict[str, Any]) -> None:
    """Redact PII in a message's text and tool results, in place (the agent holds this very dict). A tool call's
    input is kept: the tool needs its arguments (`telemetry.redact.tool_inputs` keeps them out of traces)."""
    for block in message.get("content", ()):
        if "text" in block:
            block["text"] = redact_pii(block["text"])
        elif "toolResult" in block:
            block["toolResult"]["content"] = redact_pii(block["toolResult"].get("content", []))


__all__ = ["PII_PLACEHOLDER", "redact_message_in_place", "redact_pii", "redact_tool_result"]
