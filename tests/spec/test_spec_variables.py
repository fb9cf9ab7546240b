"""Input variables: defaults, then spec values, then --var, coerced per declared type."""

from __future__ import annotations

import pytest

from strands_durable.errors import ExitCode, UsageError
from strands_durable.spec import load_spec, resolve_variables

SPEC = """\
version: 0
name: vars
runtime: {provider: synthetic}
inputs:
  required:
    topic: string
    count: {type: integer}
  optional:
    ratio: {type: number, default: 0.5}
    loud: {type: boolean, default: false}
    tone: {type: string, default: calm, enum: [calm, loud]}
    tags: {type: array, default: []}
  values:
    count: 3
    tone: loud
agents:
  a: {prompt: "{{ topic }}"}
pattern: {type: chain, config: {steps: [{agent: a}]}}
"""


@pytest.fixture
def spec(write_spec):
    return load_spec(write_spec(SPEC))


def test_precedence_defaults_then_values_then_cli(spec):
    resolved = resolve_variables(spec, ["topic=AI safety", "ratio=2", "loud=yes", "extra=kept=as text"])
    assert resolved == {
        "topic": "AI safety",
        "count": 3,
        "ratio": 2,
        "loud": True,
        "tone": "loud",
        "tags": [],
        "extra": "kept=as text",
    }


def test_cli_coercion(spec):
    resolved = resolve_variables(spec, ["topic=x", "count=-12", "ratio=1.25", "loud=False", 'tags=["a","b"]'])
    assert (resolved["count"], resolved["ratio"], resolved["loud"], resolved["tags"]) == (
        -12,
        1.25,
        False,
        ["a", "b"],
    )


@pytest.mark.parametrize(
    ("var", "message"),
    [
        ("count=three", "expected an integer"),
        ("count=1.5", "expected an integer"),
        ("ratio=nan", "finite"),
        ("loud=maybe", "expected a boolean"),
        ("tone=shouty", "is not one of 'calm', 'loud'"),
        ("tags=[oops", "expected an array as JSON"),
        ("tags={}", "expected an array"),
    ],
)
def test_bad_cli_values_are_usage_errors(spec, var, message):
    with pytest.raises(UsageError) as info:
        resolve_variables(spec, ["topic=x", var])
    assert message in str(info.value) and info.value.exit_code == ExitCode.USAGE


@pytest.mark.parametrize("var", ["novalue", "=x", "bad name=x", "9lives=x"])
def test_malformed_var_is_a_usage_error(spec, var):
    with pytest.raises(UsageError, match="Invalid --var"):
        resolve_variables(spec, ["topic=x", var])


def test_missing_required_input(spec):
    with pytest.raises(UsageError) as info:
        resolve_variables(spec, [])
    assert str(info.value) == "Missing required input(s): topic (pass --var topic=...)"
    assert info.value.exit_code == ExitCode.USAGE


def test_validate_does_not_need_required_values(spec):
    assert spec.inputs.required["topic"].type == "string"
