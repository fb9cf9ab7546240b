"""Test support shipped with the package (public): an offline model to script an agent with, and a loopback
OpenAI-compatible server for offline provider tests. Names are imported lazily.

    from strands_durable.testing import PromptScriptedModel    # docs/python-agents.md, "Try it offline"
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "PromptScriptedModel": "strands_durable.models.prompt_scripted",
    "OpenAICompatServer": "strands_durable.testing.openai_server",
    "request_from_openai": "strands_durable.testing.openai_server",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
