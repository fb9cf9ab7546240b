"""Test support shipped with the package: a loopback OpenAI-compatible server for offline provider tests."""

from __future__ import annotations

from .openai_server import OpenAICompatServer, request_from_openai

__all__ = ["OpenAICompatServer", "request_from_openai"]
