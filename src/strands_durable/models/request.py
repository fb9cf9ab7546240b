"""A model request in provider-neutral form: messages, system prompt, tool specs, tool choice.

Deterministic models answer from its normalised form (message `tracking_id` and `metadata` dropped), so a
request's digest is the same in every process, and any change to an earlier message changes it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .digest import canonical_json, sha256_hex


def normalise_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Messages reduced to what a provider sees: role and content (no tracking ids, no metadata)."""
    return [{"role": m.get("role"), "content": list(m.get("content") or [])} for m in messages]


def _tool_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    schema = spec.get("inputSchema") or {}
    if isinstance(schema, Mapping) and "json" in schema:
        schema = schema["json"]
    return {"name": spec.get("name"), "description": spec.get("description", ""), "schema": schema}


@dataclass(frozen=True)
class ModelRequest:
    """What a model is asked: normalised messages, the system prompt, tool specs and the tool choice.

    `tool_specs` keep Strands' shape (`{"name", "description", "inputSchema": {"json": schema}}`).
    """

    messages: list[dict[str, Any]]
    system_prompt: str | None = None
    tool_specs: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: dict[str, Any] | None = None

    @classmethod
    def build(
        cls,
        messages: Sequence[Mapping[str, Any]],
        tool_specs: Sequence[Mapping[str, Any]] | None = None,
        system_prompt: str | None = None,
        *,
        system_prompt_content: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: Mapping[str, Any] | None = None,
    ) -> ModelRequest:
        """Build from the arguments Strands passes to `Model.stream`."""
        if system_prompt is None and system_prompt_content:
            texts = [block["text"] for block in system_prompt_content if "text" in block]
            system_prompt = "\n".join(texts) if texts else None
        return cls(
            messages=normalise_messages(messages),
            system_prompt=system_prompt,
            tool_specs=[dict(spec) for spec in tool_specs or []],
            tool_choice=dict(tool_choice) if tool_choice else None,
        )

    def canonical(self) -> str:
        """The canonical JSON of the request; tools sorted by name, so registration order does not matter."""
        return self._canonical

    @cached_property
    def _canonical(self) -> str:
        """Encoded once per request: an answer asks for it twice (its digest and its estimated input tokens), and it
        is the whole window's JSON. A request is not changed once built (frozen; `build` gives it its own lists)."""
        tools = sorted((_tool_spec(spec) for spec in self.tool_specs), key=lambda t: str(t["name"]))
        return canonical_json(
            {
                "messages": self.messages,
                "system": self.system_prompt,
                "tools": tools,
                "tool_choice": self.tool_choice,
            }
        )

    def digest(self, seed: int = 0) -> str:
        """sha256 hex of (seed, canonical request)."""
        return sha256_hex("strands-durable/request/v1", str(seed), self.canonical())

    def estimated_input_tokens(self) -> int:
        """About four characters per token, at least one."""
        return max(1, math.ceil(len(self.canonical()) / 4))

    def tool_schema(self, name: str) -> dict[str, Any] | None:
        for spec in self.tool_specs:
            if spec.get("name") == name:
                return _tool_spec(spec)["schema"]
        return None

    def user_texts(self) -> list[str]:
        """The text of every user message that carries text (prompts, not tool results), in order."""
        return [text for message in self.messages if (text := _user_text(message)) is not None]

    def last_user_text(self) -> str:
        """The latest prompt text ("" when the conversation has none)."""
        texts = self.user_texts()
        return texts[-1] if texts else ""

    def messages_since_prompt(self) -> list[dict[str, Any]]:
        """The messages after the last user message with text (tool rounds answering that prompt)."""
        for index in range(len(self.messages) - 1, -1, -1):
            if _user_text(self.messages[index]) is not None:
                return self.messages[index + 1 :]
        return list(self.messages)

    def tool_uses_since_prompt(self) -> list[dict[str, Any]]:
        """The toolUse blocks of the assistant turns since the last prompt, in order."""
        return [
            block["toolUse"]
            for message in self.messages_since_prompt()
            if message.get("role") == "assistant"
            for block in message["content"]
            if "toolUse" in block
        ]

    def tool_rounds_since_prompt(self) -> int:
        """Assistant turns holding toolUse since the last user message with text."""
        return sum(
            1
            for message in self.messages_since_prompt()
            if message.get("role") == "assistant" and any("toolUse" in block for block in message["content"])
        )

    def assistant_turns(self) -> int:
        """How many assistant messages the conversation holds."""
        return sum(1 for message in self.messages if message.get("role") == "assistant")


def _user_text(message: Mapping[str, Any]) -> str | None:
    if message.get("role") != "user":
        return None
    texts = [block["text"] for block in message.get("content") or [] if isinstance(block.get("text"), str)]
    return "\n".join(texts) if texts else None
