"""Where a conversation manager's window may start for a provider's requests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .validate import validate


def misplaced_start(window: Sequence[Mapping[str, Any]], provider: str) -> int:
    """How many leading messages of `window` to count removed so that `provider`'s requests accept where it starts
    (rule V1: Bedrock and Anthropic want a user turn first): 0 when they do, else up to its first prompt (a user
    message without tool results), or all of it when it has none.

    The SDK's sliding window leaves such a start when an invocation is longer than the window: with no user
    message left to cut at, it cuts at a toolUse/toolResult pair. Left so, every later request of the
    conversation would be refused."""
    if not window or not any(v.rule == "V1" for v in validate(window, provider, "stored", tools_configured=True)):
        return 0
    return next((i for i, message in enumerate(window) if _is_prompt(message)), len(window))


def _is_prompt(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "user" and not any("toolResult" in block for block in message.get("content", ()))
