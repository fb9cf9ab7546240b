"""build_model: in-house models, real provider classes, and one-line errors for missing keys or packages."""

from __future__ import annotations

import sys

import pytest
from strands.models.bedrock import BedrockModel
from strands.models.openai import OpenAIModel

from strands_durable.errors import ExitCode, Unsupported, WorkflowFailed
from strands_durable.models import ScriptedModel, SyntheticModel, build_model
from strands_durable.models.loop_client import LoopBoundClient

_AWS_VARS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
)


def test_synthetic_gets_the_seed_and_sampling_settings():
    model = build_model("synthetic", runtime={"temperature": 0.3, "max_tokens": 100}, seed=5)
    assert isinstance(model, SyntheticModel)
    assert model.get_config() == {
        "model_id": "synthetic",
        "seed": 5,
        "max_tool_rounds": 2,
        "temperature": 0.3,
        "max_tokens": 100,
    }


def test_scripted_takes_the_agents_script_from_a_mapping_or_a_file(tmp_path):
    model = build_model("scripted", scripts={"writer": ["Done."], "*": ["Default."]}, agent_id="writer")
    assert isinstance(model, ScriptedModel) and model.policy.turns[0].text == "Done."
    fallback = build_model("scripted", scripts={"writer": ["Done."], "*": ["Default."]}, agent_id="critic")
    assert fallback.policy.turns[0].text == "Default."
    path = tmp_path / "script.yaml"
    path.write_text("- From a file.\n")
    assert build_model("scripted", model_id=str(path)).policy.turns[0].text == "From a file."
    with pytest.raises(WorkflowFailed, match="needs scripts"):
        build_model("scripted")


def test_openai_without_a_key_fails_naming_the_variable_and_the_offline_provider(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(WorkflowFailed) as caught:
        build_model("openai", model_id="gpt-4o-mini")
    message = str(caught.value)
    assert "OPENAI_API_KEY" in message and "--provider synthetic" in message and "\n" not in message
    assert caught.value.exit_code == ExitCode.RUNTIME


def client_args_of(model: OpenAIModel) -> dict:
    """The arguments each event loop's AsyncOpenAI is made with (the model holds one LoopBoundClient)."""
    client = model._custom_client  # the SDK keeps an injected client here
    assert isinstance(client, LoopBoundClient)
    return client.client_args


def test_openai_with_a_key_or_a_compatible_host_builds_strands_openai_model(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = build_model("openai", model_id="gpt-4o-mini", runtime={"temperature": 0.1, "top_p": 0.9})
    assert isinstance(model, OpenAIModel)
    config = model.get_config()
    assert config["model_id"] == "gpt-4o-mini" and config["params"] == {"temperature": 0.1, "top_p": 0.9}
    monkeypatch.delenv("OPENAI_API_KEY")
    local = build_model("openai", model_id="llama", runtime={"host": "http://127.0.0.1:9/v1"})
    assert client_args_of(local)["base_url"] == "http://127.0.0.1:9/v1"
    assert "sk-test" not in repr(local.get_config())


def test_azure_openai_needs_its_key_and_endpoint(monkeypatch):
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com")
    with pytest.raises(WorkflowFailed, match=r"AZURE_OPENAI_API_KEY.*--provider synthetic"):
        build_model("azure_openai", model_id="deploy")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k")
    model = build_model("azure_openai", model_id="deploy")
    assert client_args_of(model)["base_url"] == "https://res.openai.azure.com/openai/v1/"


def test_bedrock_without_aws_credentials_fails_and_with_them_builds(monkeypatch, tmp_path):
    for name in _AWS_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(WorkflowFailed, match=r"AWS_ACCESS_KEY_ID.*--provider synthetic"):
        build_model("bedrock", runtime={"region": "us-east-1"})
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    model = build_model("bedrock", model_id="m", runtime={"region": "us-east-1", "max_tokens": 64})
    assert isinstance(model, BedrockModel)
    assert model.get_config()["model_id"] == "m" and model.get_config()["max_tokens"] == 64


@pytest.mark.parametrize(
    ("provider", "module", "extra"),
    [
        ("anthropic", "anthropic", "anthropic"),
        ("ollama", "ollama", "ollama"),
        ("gemini", "google.genai", "gemini"),
        ("litellm", "litellm", "litellm"),
        ("openai", "openai", "openai"),
    ],
)
def test_a_missing_optional_package_is_unsupported_naming_the_pip_extra(monkeypatch, provider, module, extra):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import <module>` fail, installed or not
    for name in list(sys.modules):
        if name == f"strands.models.{provider}":
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with pytest.raises(Unsupported) as caught:
        build_model(provider, model_id="m")
    assert f"pip install -e '.[{extra}]'" in str(caught.value)
    assert caught.value.exit_code == ExitCode.UNSUPPORTED


def test_an_unknown_provider_is_unsupported_naming_it():
    with pytest.raises(Unsupported, match=r"unknown runtime\.provider 'watsonx'.*synthetic"):
        build_model("watsonx")
