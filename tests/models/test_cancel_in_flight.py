"""Every model we ship honours the SDK's cancel signal while a call is in flight: a real `strands.Agent`
invocation cancelled 0.2 s into a call that would take 10 s ends as `cancelled` well within a second."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from strands import Agent
from strands.models import Model

from strands_durable.models.answer import Answer, Usage
from strands_durable.models.events import answer_events
from strands_durable.models.scripted import ScriptedModel
from strands_durable.models.synthetic import LATENCY_ENV, SyntheticModel
from strands_durable.models.wrapping import WrappedModel
from strands_durable.runner.retry import RetryingModel, RetryPolicy


class SlowProvider(Model):
    """A provider that takes 10 s per answer and never looks at `cancel_signal` (most of Strands' do not)."""

    def update_config(self, **config: Any) -> None: ...

    def get_config(self) -> Any:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any):
        await asyncio.sleep(10)
        for event in answer_events(Answer("late", [], Usage(1, 1))):
            yield event


def _models() -> dict[str, Any]:
    return {
        "synthetic": SyntheticModel(seed=0),
        "scripted": ScriptedModel(["hello"]),
        "wrapped provider": WrappedModel(SlowProvider()),
        "retrying provider": RetryingModel(SlowProvider(), RetryPolicy(), on_attempt=lambda *a: None),
    }


@pytest.mark.parametrize("name", list(_models()))
def test_a_model_call_in_flight_is_cancelled_within_half_a_second(name, monkeypatch):
    monkeypatch.setenv(LATENCY_ENV, "10000")
    model = _models()[name]
    if name == "scripted":
        model.latency_seconds = lambda: 10.0  # the scripted model has no latency of its own: give it one
    agent = Agent(model=model, callback_handler=None)
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    result = asyncio.run(agent.invoke_async("Say hello.", cancel_signal=cancel))
    elapsed = time.monotonic() - started
    assert result.stop_reason == "cancelled"
    assert elapsed < 0.7, f"{name}: the call in flight ran {elapsed:.1f}s after the cancel"
