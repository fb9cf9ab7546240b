"""DurableSessionManager with the SDK's SummarizingConversationManager: when the model reports a context overflow
the manager summarizes older messages; the summarized conversation (the summary message and the count of
removed messages) is stored, and a fresh agent restores exactly what the summarizing agent held."""

from __future__ import annotations

from typing import Any

from strands import Agent
from strands.agent.conversation_manager import SummarizingConversationManager
from strands.types.exceptions import ContextWindowOverflowException

from strands_durable.history import normalize, validate
from strands_durable.models.scripted import ScriptedModel
from strands_durable.models.wrapping import WrappedModel
from strands_durable.sdk import DurableSessionManager

PROMPTS = ("Record the taxi.", "Record the hotel.", "Record the dinner.")
LIMIT = 4  # the model's context: a request with more messages overflows


class SmallContext(WrappedModel):
    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kw: Any) -> Any:
        if len(messages) > LIMIT:
            raise ContextWindowOverflowException("the request does not fit the context window")
        async for event in super().stream(messages, tool_specs, system_prompt, **kw):
            yield event


def build(sessions) -> Agent:
    summarizer = Agent(
        model=ScriptedModel(["Summary: the taxi and the hotel were recorded."] * 8), callback_handler=None
    )
    return Agent(
        model=SmallContext(ScriptedModel(["Recorded the taxi.", "Recorded the hotel.", "Recorded the dinner."] * 3)),
        conversation_manager=SummarizingConversationManager(
            summary_ratio=0.6, preserve_recent_messages=2, summarization_agent=summarizer
        ),
        callback_handler=None,
        session_manager=DurableSessionManager("summaries-1", sessions),
    )


def test_a_summarized_conversation_is_stored_and_restored(tmp_path):
    agent = build(tmp_path)
    for prompt in PROMPTS:
        agent(prompt)
    manager = agent.conversation_manager
    assert manager.removed_message_count > 0, "the overflow never made the manager summarize"
    assert "Summary:" in str(agent.messages[0]["content"])

    again = build(tmp_path)
    assert normalize(again.messages) == normalize(agent.messages)
    assert again.conversation_manager.removed_message_count == manager.removed_message_count
    assert again.conversation_manager.get_state() == manager.get_state()
    assert not validate(again.messages, provider="bedrock", mode="stored")
    again("Anything else?")  # the restored agent continues within the context window
    assert len(again.messages) <= LIMIT + 1
