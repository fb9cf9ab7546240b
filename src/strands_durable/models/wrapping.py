"""A strands Model that wraps another: configuration and structured output go to the inner model, and
subclasses override `stream` to observe, retry, count or fault the calls (imports strands: load it lazily).
The inner stream honours the SDK's `cancel_signal` in flight (models/cancel.py), whatever the provider does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from strands.models import Model

from .cancel import until_cancelled


class WrappedModel(Model):
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def update_config(self, **config: Any) -> None:
        self.inner.update_config(**config)

    def get_config(self) -> Any:
        return self.inner.get_config()

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.structured_output(*args, **kwargs)

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        async for event in until_cancelled(
            self.inner.stream(messages, tool_specs, system_prompt, **kwargs), kwargs.get("cancel_signal")
        ):
            yield event
