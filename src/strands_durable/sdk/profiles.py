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


def carries_tool_config(agent: Any) -> bool:
    """Whether the agent's next request carries a tool config: it has tools, or its model is the SDK's
    BedrockModel (which sends a placeholder tool when the history holds tool blocks and no tool is given)."""
    if agent.tool_registry.registry:
        return True
    return any(
        cls.__name__ == "BedrockModel" and cls.__module__.startswith("strands.") for cls in type(agent.model).__mro__
    )
