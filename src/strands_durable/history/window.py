"""Where a conversation manager's window may start for a provider's requests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .rules import rules_for


def misplaced_start(window: Sequence[Mapping[str, Any]], provider: str) -> int:
    """How many leading messages of `window` to count removed so that `provider`'s requests accept where it starts
    (rule V1: Bedrock and Anthropic want a prompt first, a user message without tool results): 0 when they do,
    else up to its first prompt, or all of it when it has none.

    The SDK's sliding window leaves such a start when an invocation is longer than the window: with no user
    message left to cut at, it cuts at a toolUse/toolResult pair. Left so, every later request of the
    conversation would be refused. Only the first message decides, so a unit's check costs nothing per message."""
    if not window or _is_prompt(window[0]) or "V1" not in rules_for(provider):
        return 0
    return next((i for i, message in enumerate(window) if _is_prompt(message)), len(window))


def _is_prompt(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "user" and not any("toolResult" in block for block in message.get("content", ()))
