"""The comparable form of a history (docs/contract.md#what-identical-means): ids renamed, volatile keys dropped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .copying import copy_message_data

VOLATILE_MESSAGE_KEYS = frozenset({"tracking_id", "metadata", "latencyMs", "timestamp", "created_at", "updated_at"})
"""Message-level keys that differ between identical runs: Strands' random `tracking_id`, `metadata` (usage,
latency metrics, repair markers) and timestamps. Only message-level keys are dropped; block contents (a tool's
input may well hold a "timestamp") are kept as they are."""


def normalize(messages: Sequence[Mapping[str, Any]], names: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """A deep copy of `messages` with toolUseIds renamed tool_0, tool_1, ... in order of first appearance (the
    same name in toolUse and toolResult blocks) and the volatile message keys dropped. Nothing else changes;
    the input is never mutated. `names`: the ids earlier messages named (the messages continue those; it is
    updated with the new ones), so a history normalised in pieces equals it normalised whole."""
    names = {} if names is None else names

    def rename(tool_use_id: Any) -> Any:
        if not isinstance(tool_use_id, str):
            return tool_use_id
        if tool_use_id not in names:
            names[tool_use_id] = f"tool_{len(names)}"
        return names[tool_use_id]

    normalized: list[dict[str, Any]] = []
    for message in messages:
        copied = {key: copy_message_data(value) for key, value in message.items() if key not in VOLATILE_MESSAGE_KEYS}
        content = copied.get("content")
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                for kind in ("toolUse", "toolResult"):
                    inner = block.get(kind)
                    if isinstance(inner, dict) and "toolUseId" in inner:
                        inner["toolUseId"] = rename(inner["toolUseId"])
        normalized.append(copied)
    return normalized
