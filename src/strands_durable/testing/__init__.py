"""Test support shipped with the package (public): an offline model to script an agent with, and a loopback
OpenAI-compatible server for offline provider tests. Names are imported lazily.

    from strands_durable.testing import PromptScriptedModel    # docs/python-agents.md, "Try it offline"
"""

from __future__ import annotations

from strands_durable.lazy_exports import lazy_exports

_EXPORTS = {
    "PromptScriptedModel": "strands_durable.models.prompt_scripted",
    "OpenAICompatServer": "strands_durable.testing.openai_server",
    "request_from_openai": "strands_durable.testing.openai_server",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
