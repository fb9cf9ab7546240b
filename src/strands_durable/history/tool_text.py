"""Tool blocks rendered as text, for a request that will carry no tool config (rule V13).

Anthropic's Messages API (and Bedrock's Converse, outside the SDK's BedrockModel, which adds a placeholder tool
itself) rejects a request whose history holds toolUse or toolResult blocks without a tool config: an agent whose
tools were removed since those calls can never ask its model again. Rendering each call and result as a text
block keeps what happened readable to the model, the message count and the alternation. A message holding
reasoning is left as it is (its blocks are replayed byte for byte, rule V12).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .copying import copy_message_data
from .types import RepairAction


def tool_blocks_as_text(messages: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[RepairAction]]:
    """`messages` with every toolUse and toolResult block turned into a text block (except the calls of messages
    holding reasoning and their results), and what was changed. The input is never mutated."""
    out: list[dict[str, Any]] = []
    actions: list[RepairAction] = []
    kept = {  # calls in a message holding reasoning stay blocks, and so do their results
        block["toolUse"].get("toolUseId")
        for message in messages
        if any("reasoningContent" in block for block in message["content"])
        for block in message["content"]
        if "toolUse" in block
    }
    for index, message in enumerate(messages):
        copied = {key: copy_message_data(value) for key, value in message.items()}
        content = copied["content"]
        if not any("reasoningContent" in block for block in content):
            for position, block in enumerate(content):
                text = None if block.get("toolResult", {}).get("toolUseId") in kept else _as_text(block)
                if text is not None:
                    content[position] = {"text": text}
                    tool_use_id = (block.get("toolUse") or block.get("toolResult") or {}).get("toolUseId")
                    actions.append(
                        RepairAction("tool_block_as_text", index, tool_use_id, "rendered a tool block as text")
                    )
        out.append(copied)
    return out, actions


def _as_text(block: Mapping[str, Any]) -> str | None:
    use = block.get("toolUse")
    if use is not None:
        arguments = json.dumps(use.get("input"), sort_keys=True, ensure_ascii=False, default=str)
        return f"[called the tool {use.get('name')} with {arguments}]"
    result = block.get("toolResult")
    if result is None:
        return None
    parts = []
    for item in result.get("content") or ():
        if "text" in item:
            parts.append(str(item["text"]))
        elif "json" in item:
            parts.append(json.dumps(item["json"], sort_keys=True, ensure_ascii=False, default=str))
        else:
            parts.append(f"[{', '.join(sorted(item))} omitted]")
    return f"[the tool returned ({result.get('status', 'success')}): {' '.join(parts)}]"
