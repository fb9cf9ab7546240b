"""The rules a history must satisfy (reference/history-invariants.md) and which profiles enforce each.

Profiles describe the API a request goes to: "bedrock" is the Converse API itself, "anthropic" the Messages
API, "openai" Chat Completions as Strands' OpenAI model formats it. "all" is the union, the strictest; use it
for anything that may be replayed against another provider (Claude on Bedrock also returns Anthropic's errors,
so "all" is the right profile for it).

| rule | bedrock | anthropic | openai | why |
|------|---------|-----------|--------|-----|
| V0   | yes | yes | yes | not a message list: every API rejects it |
| V1   | yes | yes | no  | Bedrock and Anthropic want a user turn first; OpenAI accepts an assistant first |
| V2   | yes | no  | no  | only Bedrock is strict; Anthropic merges same-role runs, OpenAI accepts them |
| V3   | yes | yes | yes | every API rejects a tool call without its result right after it |
| V4   | yes | yes | yes | every API rejects a result that answers no call of the previous turn |
| V5   | no  | yes | no  | only Anthropic requires tool results at the start of the turn |
| V6   | yes | yes | no  | Anthropic requires unique ids, Bedrock the id pattern; OpenAI checks neither |
| V7   | yes | yes | no  | empty content; Anthropic exempts a final assistant message, Bedrock does not |
| V8   | yes | yes | no  | blank text blocks |
| V9   | yes | no  | no  | Bedrock rejects an error result without content |
| V10  | yes | yes | no  | request mode only: newer Claude models take no prefill; OpenAI accepts one |
| V11  | yes | yes | no  | extended thinking (Anthropic's, also via Converse); only if `thinking` is given |
| V13  | yes | yes | no  | a tool config must accompany tool blocks; only when `tools_configured` is given |

Rules with one scope: V3-V5 look at *turns*, runs of consecutive same-role messages, the way Anthropic reads
a request; strict alternation is V2's job alone. V8 checks top-level text blocks, not text inside a tool
result (repair never edits a paired result). V12 (reasoning blocks replayed byte-identical) compares two
histories, so it is `check_reasoning_preserved`, not part of `validate`. V14 is about storage, so it is
`validate_stored_indices`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    id: str
    summary: str
    provider_error: str
    profiles: frozenset[str]


_BEDROCK = "bedrock"
_ANTHROPIC = "anthropic"
_OPENAI = "openai"
_ALL_PROVIDERS = frozenset({_BEDROCK, _ANTHROPIC, _OPENAI})

PROFILES: tuple[str, ...] = ("bedrock", "anthropic", "openai", "all")

RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule(
            "V0",
            "every message is a dict with role user|assistant and a content list of dict blocks; toolUse "
            "only in assistant messages, toolResult only in user messages, both with a string toolUseId",
            "Bedrock/Anthropic/OpenAI: request validation error (malformed message)",
            _ALL_PROVIDERS,
        ),
        Rule(
            "V1",
            "the first message has role user and holds no toolResult",
            "Bedrock: A conversation must start with a user message.",
            frozenset({_BEDROCK, _ANTHROPIC}),
        ),
        Rule(
            "V2",
            "roles alternate user/assistant",
            "Bedrock: A conversation must alternate between user and assistant roles.",
            frozenset({_BEDROCK}),
        ),
        Rule(
            "V3",
            "an assistant turn with toolUse ids U is followed by a user turn whose toolResult ids are exactly U",
            "Anthropic: `tool_use` ids were found without `tool_result` blocks immediately after; "
            "Bedrock: Expected toolResult blocks at messages.N.content for the following Ids; "
            "OpenAI: An assistant message with 'tool_calls' must be followed by tool messages responding "
            "to each 'tool_call_id'.",
            _ALL_PROVIDERS,
        ),
        Rule(
            "V4",
            "every toolResult answers a toolUse of the previous turn, once",
            "Anthropic: unexpected `tool_use_id` found in `tool_result` blocks; Bedrock: The number of "
            "toolResult blocks at messages.N.content exceeds the number of toolUse blocks of previous turn.",
            _ALL_PROVIDERS,
        ),
        Rule(
            "V5",
            "in a user turn the toolResult blocks come before any other block",
            "Anthropic: Did not find N tool_result block(s) at the beginning of this message.",
            frozenset({_ANTHROPIC}),
        ),
        Rule(
            "V6",
            "toolUse ids are unique across the history and match ^[a-zA-Z0-9_-]{1,64}$",
            "Anthropic: `tool_use` ids must be unique; Bedrock/Anthropic: toolUseId pattern errors",
            frozenset({_BEDROCK, _ANTHROPIC}),
        ),
        Rule(
            "V7",
            "no message has empty content (Anthropic alone exempts a final assistant message)",
            "Anthropic: all messages must have non-empty content except for the optional final assistant "
            "message; Bedrock: The content field in the Message object at messages.N is empty.",
            frozenset({_BEDROCK, _ANTHROPIC}),
        ),
        Rule(
            "V8",
            "no empty or whitespace-only text block",
            "Anthropic: text content blocks must be non-empty; Bedrock: The text field in the ContentBlock "
            "object at messages.N.content.M is blank.",
            frozenset({_BEDROCK, _ANTHROPIC}),
        ),
        Rule(
            "V9",
            "a toolResult with status error has non-empty content",
            "Bedrock: The content field at messages.N.content.0.toolResult cannot be empty when status value is error.",
            frozenset({_BEDROCK}),
        ),
        Rule(
            "V10",
            "a request ends with a user message (so no final assistant message, trailing whitespace or not)",
            "This model does not support assistant message prefill.; final assistant content cannot end "
            "with trailing whitespace",
            frozenset({_BEDROCK, _ANTHROPIC}),
        ),
        Rule(
            "V11",
            "with extended thinking on, the last assistant turn of an open tool loop starts with a reasoning "
            "block; with it off, that turn holds none",
            "Anthropic: Expected `thinking` or `redacted_thinking`, but found `tool_use`",
            frozenset({_BEDROCK, _ANTHROPIC}),
        ),
        Rule(
            "V12",
            "reasoning blocks are replayed byte-identical, never edited or invented",
            "Anthropic: Invalid `signature` in `thinking` block; blocks in the latest assistant message "
            "cannot be modified",
            frozenset({_BEDROCK, _ANTHROPIC}),
        ),
        Rule(
            "V13",
            "a request carries a tool config whenever the history holds toolUse or toolResult",
            "Bedrock: The toolConfig field must be defined when using toolUse and toolResult content blocks.",
            frozenset({_BEDROCK, _ANTHROPIC}),
        ),
        Rule(
            "V14",
            "stored message indices are 0..n-1, contiguous, and agree with the agent record's message count",
            "silent gaps and lost turns",
            frozenset({_BEDROCK, _ANTHROPIC, _OPENAI}),
        ),
    )
}


@functools.cache
def rules_for(provider: str) -> frozenset[str]:
    """The ids of the rules `provider` enforces ("all" enforces every rule any provider enforces)."""
    if provider == "all":
        return frozenset(rule.id for rule in RULES.values() if rule.profiles)
    if provider not in PROFILES:
        raise ValueError(f"unknown provider profile {provider!r}; expected one of {', '.join(PROFILES)}")
    return frozenset(rule.id for rule in RULES.values() if provider in rule.profiles)
