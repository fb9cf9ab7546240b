"""`build_model`: the model for a `runtime.provider`, from our deterministic models or Strands' own classes.

Real providers are imported lazily inside the function. A missing credential is a `WorkflowFailed` naming the
variable and suggesting `--provider synthetic` (never a silent fallback); a provider whose optional package is
not installed is `Unsupported` naming the extra to install from the checkout.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import Unsupported, WorkflowFailed

if TYPE_CHECKING:
    from strands.models import Model

PROVIDERS = (
    "synthetic",
    "scripted",
    "openai",
    "azure_openai",
    "anthropic",
    "bedrock",
    "ollama",
    "gemini",
    "litellm",
)
_OFFLINE_HINT = "or run offline with --provider synthetic"
_DEFAULT_MODEL_IDS = {
    "openai": "gpt-4o-mini",
    "anthropic": "claude-sonnet-4-5",
    "ollama": "llama3",
    "gemini": "gemini-2.5-flash",
}


def build_model(
    provider: str,
    *,
    model_id: str | None = None,
    runtime: Mapping[str, Any] | None = None,
    seed: int = 0,
    scripts: Any = None,
    agent_id: str | None = None,
) -> Model:
    """A `strands.models.Model` for `provider`.

    `runtime` holds the spec's `runtime` keys (temperature, top_p, max_tokens, host, region); `seed` is for
    `synthetic`; `scripts` (one script, or agent id -> script) and `agent_id` are for `scripted`, which
    otherwise reads the script file named by `model_id`.
    """
    runtime = runtime or {}
    builder = _BUILDERS.get(provider)
    if builder is None:
        raise Unsupported(f"unknown runtime.provider {provider!r}; supported: {', '.join(PROVIDERS)}")
    return builder(model_id=model_id, runtime=runtime, seed=seed, scripts=scripts, agent_id=agent_id)


def _sampling(runtime: Mapping[str, Any], *, max_tokens_key: str | None = "max_tokens") -> dict[str, Any]:
    params = {key: runtime.get(key) for key in ("temperature", "top_p")}
    if max_tokens_key:
        params[max_tokens_key] = runtime.get("max_tokens")
    return {key: value for key, value in params.items() if value is not None}


def _require_env(provider: str, *names: str) -> str:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    wanted = " or ".join(names)
    raise WorkflowFailed(f"provider {provider!r} needs {wanted} set in the environment; {_OFFLINE_HINT}")


def _missing_package(provider: str, extra: str, exc: ImportError) -> Unsupported:
    return Unsupported(
        f"provider {provider!r} needs the {exc.name or extra} package: in the strands-durable checkout run "
        f"pip install -e '.[{extra}]' (the package is not on PyPI yet)"
    )


def _synthetic(*, model_id: str | None, runtime: Mapping[str, Any], seed: int, **_: Any) -> Any:
    from .synthetic import SyntheticModel

    literals = tuple(tuple(pair) for pair in runtime.get("answer_literals", ()))  # graph `when` literals
    return SyntheticModel(seed=seed, model_id=model_id or "synthetic", answer_literals=literals, **_sampling(runtime))


def _scripted(*, model_id: str | None, scripts: Any, agent_id: str | None, **_: Any) -> Any:
    from .scripted import ScriptedModel, load_script_file, select_script

    if scripts is None:
        if not model_id or not Path(model_id).is_file():
            raise WorkflowFailed(
                "provider 'scripted' needs scripts, or runtime.model_id naming a script file (JSON or YAML)"
            )
        scripts = load_script_file(model_id)
    return ScriptedModel(select_script(scripts, agent_id), name=agent_id or "scripted", model_id=model_id or "scripted")


def _openai_model(provider: str, client_args: dict[str, Any], model_id: str, params: dict[str, Any]) -> Any:
    """Strands' `OpenAIModel` with one `AsyncOpenAI(**client_args)` per event loop (models/loop_client.py)
    instead of a new one per request, sending its messages without the openai package's transform
    (models/direct_messages.py)."""
    try:
        from strands.models.openai import OpenAIModel  # imports the openai package
    except ImportError as exc:
        raise _missing_package(provider, "openai", exc) from exc
    from .direct_messages import DirectMessagesClient
    from .loop_client import LoopBoundClient

    client = LoopBoundClient(DirectMessagesClient.make, **client_args)
    return OpenAIModel(client=client, model_id=model_id, params=params)


def _openai(*, model_id: str | None, runtime: Mapping[str, Any], **_: Any) -> Any:
    host = runtime.get("host")
    if host:  # an OpenAI-compatible server; many need no key, the client needs a non-empty one
        client_args = {"base_url": str(host), "api_key": os.environ.get("OPENAI_API_KEY") or "unused"}
    else:
        client_args = {"api_key": _require_env("openai", "OPENAI_API_KEY")}
    return _openai_model("openai", client_args, model_id or _DEFAULT_MODEL_IDS["openai"], _sampling(runtime))


def _azure_openai(*, model_id: str | None, runtime: Mapping[str, Any], **_: Any) -> Any:
    """Azure OpenAI via its OpenAI-compatible v1 endpoint (`<endpoint>/openai/v1/`); model_id = deployment."""
    endpoint = str(runtime.get("host") or _require_env("azure_openai", "AZURE_OPENAI_ENDPOINT"))
    api_key = _require_env("azure_openai", "AZURE_OPENAI_API_KEY")
    if not model_id:
        raise WorkflowFailed("provider 'azure_openai' needs runtime.model_id (the deployment name)")
    base_url = endpoint.rstrip("/") + ("/" if endpoint.rstrip("/").endswith("/openai/v1") else "/openai/v1/")
    client_args = {"base_url": base_url, "api_key": api_key}
    return _openai_model("azure_openai", client_args, model_id, _sampling(runtime))


def _anthropic(*, model_id: str | None, runtime: Mapping[str, Any], **_: Any) -> Any:
    try:
        from strands.models.anthropic import AnthropicModel
    except ImportError as exc:
        raise _missing_package("anthropic", "anthropic", exc) from exc
    client_args: dict[str, Any] = {"api_key": _require_env("anthropic", "ANTHROPIC_API_KEY")}
    if runtime.get("host"):
        client_args["base_url"] = str(runtime["host"])
    return AnthropicModel(
        client_args=client_args,
        model_id=model_id or _DEFAULT_MODEL_IDS["anthropic"],
        max_tokens=int(runtime.get("max_tokens") or 4096),
        params=_sampling(runtime, max_tokens_key=None),
    )


def _bedrock(*, model_id: str | None, runtime: Mapping[str, Any], **_: Any) -> Any:
    import boto3  # a dependency of strands-agents itself
    from strands.models.bedrock import BedrockModel

    region = runtime.get("region")
    api_key = os.environ.get("AWS_BEARER_TOKEN_BEDROCK", "").strip() or None
    if api_key is None and boto3.Session(region_name=region).get_credentials() is None:
        raise WorkflowFailed(
            "provider 'bedrock' found no AWS credentials (set AWS_PROFILE, or AWS_ACCESS_KEY_ID and "
            f"AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK); {_OFFLINE_HINT}"
        )
    config: dict[str, Any] = _sampling(runtime)
    if model_id:
        config["model_id"] = model_id
    return BedrockModel(region_name=region, api_key=api_key, **config)


def _ollama(*, model_id: str | None, runtime: Mapping[str, Any], **_: Any) -> Any:
    try:
        from strands.models.ollama import OllamaModel
    except ImportError as exc:
        raise _missing_package("ollama", "ollama", exc) from exc
    host = str(runtime.get("host") or "http://localhost:11434")
    return OllamaModel(host, model_id=model_id or _DEFAULT_MODEL_IDS["ollama"], **_sampling(runtime))


def _gemini(*, model_id: str | None, runtime: Mapping[str, Any], **_: Any) -> Any:
    try:
        from strands.models.gemini import GeminiModel
    except ImportError as exc:
        raise _missing_package("gemini", "gemini", exc) from exc
    api_key = _require_env("gemini", "GEMINI_API_KEY", "GOOGLE_API_KEY")
    return GeminiModel(
        client_args={"api_key": api_key},
        model_id=model_id or _DEFAULT_MODEL_IDS["gemini"],
        params=_sampling(runtime, max_tokens_key="max_output_tokens"),
    )


def _litellm(*, model_id: str | None, runtime: Mapping[str, Any], **_: Any) -> Any:
    try:
        from strands.models.litellm import LiteLLMModel
    except ImportError as exc:
        raise _missing_package("litellm", "litellm", exc) from exc
    if not model_id:
        raise WorkflowFailed("provider 'litellm' needs runtime.model_id (e.g. 'openai/gpt-4o-mini')")
    client_args = {"api_base": str(runtime["host"])} if runtime.get("host") else {}
    return LiteLLMModel(client_args=client_args, model_id=model_id, params=_sampling(runtime))


_BUILDERS: dict[str, Callable[..., Any]] = {
    "synthetic": _synthetic,
    "scripted": _scripted,
    "openai": _openai,
    "azure_openai": _azure_openai,
    "anthropic": _anthropic,
    "bedrock": _bedrock,
    "ollama": _ollama,
    "gemini": _gemini,
    "litellm": _litellm,
}
