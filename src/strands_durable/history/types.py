"""The values the history functions speak in: violations, repair actions, and the texts repair writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

OUTCOME_UNKNOWN = "outcome unknown"
"""The marker: every result of a call whose outcome a crash hid says these words (the chaos judge looks for them in
a stored conversation, a user reads them; docs/contract.md, "Tools and side effects")."""

SYNTHESIZED_RESULT_TEXT = f"interrupted before its result was recorded; {OUTCOME_UNKNOWN}"
"""The text of the error result `repair` writes for a tool call whose outcome is unknown."""

SDK_INTERRUPTED_TEXT = "Tool was interrupted."
"""The placeholder result text the Strands SDK writes when a prompt arrives after a dangling toolUse."""

SEPARATOR_TEXT = "(no user message was recorded here)"
"""The text of the user message `repair` inserts where two assistant turns cannot be merged (one holds
reasoning) or where a history starts with an assistant turn."""

METADATA_KEY = "strands_durable"
"""The key under a message's `metadata` where repair records what it invented."""


@dataclass(frozen=True)
class Violation:
    """One broken rule: where it is (message and content block index) and the provider error it prevents."""

    rule: str
    message_index: int | None
    content_index: int | None
    message: str
    provider_error: str

    def __str__(self) -> str:
        where = "request" if self.message_index is None else f"messages[{self.message_index}]"
        if self.content_index is not None:
            where += f".content[{self.content_index}]"
        return f"{self.rule} {where}: {self.message}"


RepairKind = Literal[
    "dropped_blank_text",
    "dropped_empty_message",
    "merged_messages",
    "renamed_tool_use_id",
    "restored_from_journal",
    "replaced_interrupted_result",
    "synthesized_result",
    "dropped_call",
    "dropped_orphan_result",
    "dropped_duplicate_result",
    "moved_results_first",
    "filled_error_result",
    "tool_block_as_text",
    "inserted_separator",
]


@dataclass(frozen=True)
class RepairAction:
    """One change `repair` made. `message_index` is the index in the input history the change concerns."""

    kind: RepairKind
    message_index: int
    tool_use_id: str | None
    description: str

    def __str__(self) -> str:
        return f"{self.kind} at messages[{self.message_index}]: {self.description}"


class MalformedHistory(ValueError):
    """The input is not a message list at all (a message without a role or content list, a toolUse in a
    user message, ...); repair does not guess what such data meant."""
