"""Which provider's rules a plain-Python agent's requests are validated with, from its model's class."""

from __future__ import annotations

from typing import Any

DEFAULT_PROFILE = "all"
"""Custom or unknown model classes: every provider's rules at once (the strictest; override with
`DurableSessionManager(provider_profile=...)`)."""

_BY_CLASS_NAME = {
    "BedrockModel": "bedrock",
    "AnthropicModel": "anthropic",
    "OpenAIModel": "openai",
    "OpenAIResponsesModel": "openai",
    "LiteLLMModel": "openai",
}


def profile_for_model(model: Any) -> str:
    """The validation profile of `model`: its class or a base class named in the table, else DEFAULT_PROFILE."""
    for cls in type(model).__mro__:
        profile = _BY_CLASS_NAME.get(cls.__name__)
        if profile is not None and cls.__module__.startswith("strands."):
            return profile
    return DEFAULT_PROFILE
