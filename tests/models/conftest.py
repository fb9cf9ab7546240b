"""Shared helpers for the model-layer tests: run a model's stream outside an agent and read its events."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from strands import tool


def _collect(model: Any, messages: list[dict[str, Any]], tool_specs: Any = None, **kwargs: Any) -> list[dict]:
    async def run() -> list[dict]:
        return [event async for event in model.stream(messages, tool_specs, **kwargs)]

    return asyncio.run(run())


@pytest.fixture
def collect() -> Callable[..., list[dict]]:
    """collect(model, messages, tool_specs=None, **kwargs) -> the list of stream events."""
    return _collect


def text_of(events: list[dict]) -> str:
    return "".join(e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"text": text}]}


@tool
def lookup_weather(city: str, days: int = 1, units: str = "metric") -> str:
    """Look up the weather forecast.

    Args:
        city: The city to look up.
        days: How many days ahead.
        units: metric or imperial.
    """
    return f"sunny in {city} for {days} days ({units})"
