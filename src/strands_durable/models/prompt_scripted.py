"""`PromptScriptedModel`: a deterministic, offline Strands model that answers each prompt with its own turns.

For trying `DurableSessionManager` (and testing an agent) without a provider. The script maps a prompt's text to
the turns that answer it, in the turn forms of `ScriptedModel` (text, a list of tool calls, or
`{"text", "tool_calls", "usage"}`). The turn answered is the number of assistant messages after the latest
prompt in the request, so the model keys on the invocation under way, not on the whole history: a conversation
manager that trims older messages (the SDK's sliding window) changes nothing, and a fresh model in a fresh process
continues a resumed invocation at the right turn. A tool call's `toolUseId`, when the script gives none, derives
from the request (the same request gives the same id in every process).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .answer import Answer, ToolCall, estimated_usage
from .base import PolicyModel
from .digest import sha256_hex
from .events import StreamFault
from .request import ModelRequest
from .scripted import ScriptedTurn, ScriptError, ScriptExhausted, parse_turn


class PromptScriptPolicy:
    """Answers turn N of the prompt's script to a request holding N assistant messages after that prompt."""

    def __init__(self, script: Mapping[str, Sequence[Any]]) -> None:
        if not isinstance(script, Mapping) or not script:
            raise ScriptError("a prompt script maps each prompt's text to the list of turns that answer it")
        self.turns: dict[str, list[ScriptedTurn]] = {}
        for prompt, turns in script.items():
            if not isinstance(turns, Sequence) or isinstance(turns, str) or not turns:
                raise ScriptError(f"prompt {prompt!r}: expected a non-empty list of turns")
            self.turns[str(prompt)] = [parse_turn(raw, index) for index, raw in enumerate(turns)]

    def answer(self, request: ModelRequest) -> Answer:
        prompt = request.last_user_text()
        turns = self.turns.get(prompt)
        if turns is None:
            known = ", ".join(repr(p) for p in self.turns)
            raise ScriptExhausted(f"no turns scripted for the prompt {prompt!r} (the script has: {known})")
        index = sum(1 for message in request.messages_since_prompt() if message.get("role") == "assistant")
        if index >= len(turns):
            raise ScriptExhausted(
                f"the prompt {prompt!r} has {len(turns)} scripted turns; the conversation asks for turn {index + 1}"
            )
        turn = turns[index]
        request_digest = request.digest()
        calls = [
            ToolCall(
                call["name"],
                call["input"],
                call.get("toolUseId") or "tooluse_" + sha256_hex(request_digest, str(position))[:24],
            )
            for position, call in enumerate(turn.tool_calls)
        ]
        return Answer(turn.text, calls, turn.usage or estimated_usage(request, turn.text, calls))


class PromptScriptedModel(PolicyModel):
    """A Strands model that answers each prompt with its scripted turns; deterministic and stateless.

    ```python
    model = PromptScriptedModel({
        "Record the taxi.": [[{"name": "add_expense", "input": {"item": "taxi", "amount": 12}}], "Recorded."],
        "What did I spend?": ["12 in all."],
    })
    ```
    """

    def __init__(
        self,
        script: Mapping[str, Sequence[Any]],
        *,
        model_id: str = "prompt-scripted",
        stream_fault: StreamFault | None = None,
        **config: Any,
    ) -> None:
        super().__init__(PromptScriptPolicy(script), stream_fault=stream_fault, model_id=model_id, **config)


__all__ = ["PromptScriptPolicy", "PromptScriptedModel"]
