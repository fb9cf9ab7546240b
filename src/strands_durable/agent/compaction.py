"""`context_policy.compaction`: the Strands SDK's `SummarizingConversationManager`, as strands-cli configures it,
made durable.

strands-cli gives every agent a `SummarizingConversationManager(summary_ratio, preserve_recent_messages)` (with
`summarization_model`, a cheaper model summarizes, told strands-cli's summarizer prompt) and means to compact once
the conversation passes `when_tokens_over` (60000 by default), lowering `preserve_recent_messages` when too few
messages are there to summarize. Here the check runs before an agent's next unit starts: when the conversation's
latest committed model turn since its last compaction used `when_tokens_over` tokens or more (its request and
answer: the conversation's size as the provider counted it), the oldest part is summarized. The SDK also
summarizes on a provider's context-overflow error, mid-unit. Either way the new manager state (the summary and the
count of messages it replaces) is committed at once, so a resume restores the compacted conversation exactly and
never asks for that summary again.

The summarized part ends before an assistant message, so the history stays valid: the summary (a user message) is
never followed by another user message, and no tool result loses its call.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from strands.agent.conversation_manager import SummarizingConversationManager
from strands.types.exceptions import ContextWindowOverflowException

DEFAULT_THRESHOLD = 60000  # strands-cli's `when_tokens_over` when the spec gives none
MIN_SUMMARIZED = 5  # strands-cli: at least this many messages are left to summarize when preserve is lowered
MIN_PRESERVED = 3
SUMMARIZER_PROMPT = (
    "You are a helpful assistant that creates concise summaries of conversation history. "
    "Preserve key facts, decisions, and context while reducing length. "
    "Focus on information relevant to the ongoing task."
)  # strands-cli's summarization agent, used with `summarization_model`


@dataclass(frozen=True)
class CompactionPolicy:
    """What an agent's conversation is compacted by (built from the spec's `context_policy.compaction`)."""

    when_tokens_over: int = DEFAULT_THRESHOLD
    summary_ratio: float = 0.35
    preserve_recent_messages: int = 12
    summarization_model: Any = None  # a strands Model; None: the agent's own model with the SDK's prompt


class DurableSummarizingManager(SummarizingConversationManager):
    """The SDK's summarizing manager, with a split that keeps the history valid, strands-cli's lowering of
    `preserve_recent_messages`, and a callback that commits each compaction the moment it is made."""

    def __init__(self, policy: CompactionPolicy) -> None:
        super().__init__(
            summary_ratio=policy.summary_ratio,
            preserve_recent_messages=policy.preserve_recent_messages,
            summarization_system_prompt=SUMMARIZER_PROMPT if policy.summarization_model is not None else None,
        )
        self.policy = policy
        self.compacted_at = 0  # the stored conversation's length at the last compaction
        self.on_compacted: Callable[[DurableSummarizingManager], None] = lambda manager: None

    # -- state: the SDK's, plus where the last compaction happened; never the summary's random tracking id ------
    def get_state(self) -> dict[str, Any]:
        state = super().get_state()
        summary = state.get("summary_message")
        if summary is not None:
            state["summary_message"] = {k: v for k, v in summary.items() if k != "tracking_id"}
        state["compacted_at"] = self.compacted_at
        return state

    def restore_from_session(self, state: dict[str, Any]) -> list[Any] | None:
        self.compacted_at = int(state.get("compacted_at", 0))
        prepend = super().restore_from_session(state)
        return copy.deepcopy(prepend) if prepend else None

    # -- compaction ----------------------------------------------------------------------------------------
    def due(self, messages: list[dict[str, Any]]) -> bool:
        """Whether the latest committed model turn since the last compaction reached the threshold."""
        for message in reversed(messages[self.compacted_at :]):
            if message.get("role") == "assistant":
                usage = (message.get("metadata") or {}).get("usage") or {}
                return int(usage.get("totalTokens", 0)) >= self.policy.when_tokens_over
        return False

    def compact(self, agent: Any) -> None:
        """Summarize now (best effort, as the SDK's proactive path: too few messages leaves things as they are),
        lowering `preserve_recent_messages` for this once when the conversation is short, as strands-cli does."""
        configured = self.preserve_recent_messages
        if len(agent.messages) < configured + MIN_SUMMARIZED:
            self.preserve_recent_messages = max(len(agent.messages) - MIN_SUMMARIZED, MIN_PRESERVED)
        try:
            self.reduce_context(agent)
        finally:
            self.preserve_recent_messages = configured

    def reduce_context(self, agent: Any, e: Exception | None = None, **kwargs: Any) -> None:
        before = (self.removed_message_count, self._summary_message)
        super().reduce_context(agent, e, **kwargs)
        if (self.removed_message_count, self._summary_message) != before:
            self.on_compacted(self)

    def _adjust_split_point_for_tool_pairs(self, messages: list[Any], split_point: int) -> int:
        """The SDK's split (no tool result without its call), moved on to the next assistant message: the kept
        part then starts with an answer, never with a user message after the user-role summary."""
        split = super()._adjust_split_point_for_tool_pairs(messages, split_point)
        while split < len(messages) and messages[split].get("role") != "assistant":
            split += 1
        if split >= len(messages):
            raise ContextWindowOverflowException("Cannot summarize: no assistant message to keep after the summary")
        return split


__all__ = ["DEFAULT_THRESHOLD", "CompactionPolicy", "DurableSummarizingManager"]
