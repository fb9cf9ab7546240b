"""`PolicyModel`: a Strands `Model` that streams what a deterministic `AnswerPolicy` answers.

The synthetic and scripted models are this class with a policy; it builds the normalised `ModelRequest`, asks
the policy, optionally sleeps (latency) and injects a `StreamFault`, and yields Converse stream events.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator
from typing import Any, TypeVar

from pydantic import BaseModel
from strands.models import Model

from .answer import Answer, AnswerPolicy
from .cancel import until_cancelled
from .digest import DigestRandom
from .events import StreamCut, StreamFault, answer_events, apply_fault_to_answer
from .request import ModelRequest
from .schema_values import value_for_schema

T = TypeVar("T", bound=BaseModel)


class PolicyModel(Model):
    """A Strands model answering from a policy; stateless apart from the count of faulted calls."""

    def __init__(self, policy: AnswerPolicy, *, stream_fault: StreamFault | None = None, **config: Any) -> None:
        self.policy = policy
        self.stream_fault = stream_fault
        self.config: dict[str, Any] = dict(config)
        self._faulted_calls = 0
        self._fault_lock = threading.Lock()

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return dict(self.config)

    def latency_seconds(self) -> float:
        """Extra delay per call (none by default)."""
        return 0.0

    def answer_for(self, request: ModelRequest) -> Answer:
        return self.policy.answer(request)

    def _fault_for_this_call(self) -> StreamFault | None:
        fault = self.stream_fault
        if fault is None:
            return None
        with self._fault_lock:
            if fault.times is not None and self._faulted_calls >= fault.times:
                return None
            self._faulted_calls += 1
        return fault

    async def stream(
        self,
        messages: Any,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        *,
        tool_choice: Any = None,
        system_prompt_content: Any = None,
        cancel_signal: threading.Event | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[dict[str, Any], None]:
        """The answer's events; a set `cancel_signal` ends the stream at once, even during the latency."""
        events = self._answer_stream(messages, tool_specs, system_prompt, tool_choice, system_prompt_content)
        async for event in until_cancelled(events, cancel_signal):
            yield event

    async def _answer_stream(
        self, messages: Any, tool_specs: Any, system_prompt: str | None, tool_choice: Any, system_prompt_content: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        request = ModelRequest.build(
            messages,
            tool_specs,
            system_prompt,
            system_prompt_content=system_prompt_content,
            tool_choice=tool_choice,
        )
        answer = self.answer_for(request)
        delay = self.latency_seconds()
        if delay > 0:
            await asyncio.sleep(delay)
        fault = self._fault_for_this_call()
        events = answer_events(apply_fault_to_answer(answer, fault))
        cut_at = min(fault.after_events, len(events)) if fault is not None and fault.kind == "cut" else None
        for event in events[:cut_at]:
            yield event
        if cut_at is not None:
            raise StreamCut(f"model stream cut after {cut_at} events (injected fault)")

    async def structured_output(
        self,
        output_model: type[T],
        prompt: Any,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        """A schema-valid instance of `output_model`, chosen by the request's digest (legacy Strands API)."""
        request = ModelRequest.build(prompt, None, system_prompt)
        seed = self.config.get("seed", 0)
        schema = output_model.model_json_schema()
        value = value_for_schema(schema, DigestRandom(request.digest(seed), "structured-output"))
        yield {"output": output_model.model_validate(value)}
