"""What a deterministic model answers to one request: text, or tool calls, with token usage.

Policies (synthetic, scripted) produce an `Answer`; the Strands adapter turns it into Converse stream events
and the loopback OpenAI server into SSE chunks, so every face of a policy answers the same thing.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from .digest import canonical_json
from .request import ModelRequest

TOOL_USE_ID_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(frozen=True)
class ToolCall:
    """One toolUse block: tool name, JSON input and its id."""

    name: str
    input: dict[str, Any]
    tool_use_id: str


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    output_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def as_strands(self) -> dict[str, int]:
        return {
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "totalTokens": self.total_tokens,
        }


@dataclass(frozen=True)
class Answer:
    """A whole assistant turn. With tool calls the stop reason is `tool_use`, otherwise `end_turn`."""

    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=lambda: Usage(0, 0))

    @property
    def stop_reason(self) -> str:
        return "tool_use" if self.tool_calls else "end_turn"


def estimate_output_tokens(text: str | None, tool_calls: list[ToolCall]) -> int:
    """About four characters per token over the text and the tool calls, at least one."""
    size = len(text or "") + sum(len(c.name) + len(canonical_json(c.input)) for c in tool_calls)
    return max(1, math.ceil(size / 4))


def estimated_usage(request: ModelRequest, text: str | None, tool_calls: list[ToolCall]) -> Usage:
    return Usage(request.estimated_input_tokens(), estimate_output_tokens(text, tool_calls))


class AnswerPolicy(Protocol):
    """Anything that answers a request deterministically (the synthetic and scripted policies)."""

    def answer(self, request: ModelRequest) -> Answer: ...
