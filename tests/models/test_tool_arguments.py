"""Tool call arguments from the synthetic model validate against each tool's JSON input schema."""

from __future__ import annotations

import importlib
from typing import Literal

import jsonschema
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from strands import tool

from strands_durable.models.digest import DigestRandom
from strands_durable.models.request import ModelRequest
from strands_durable.models.schema_values import value_for_schema
from strands_durable.models.synthetic_policy import SyntheticPolicy

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)


@st.composite
def string_schemas(draw):
    schema = {"type": "string"}
    low = draw(st.integers(0, 5))
    if draw(st.booleans()):
        schema["minLength"] = low
    if draw(st.booleans()):
        schema["maxLength"] = low + draw(st.integers(0, 20))
    if draw(st.booleans()):
        schema["format"] = draw(st.sampled_from(["date", "date-time", "email", "uri", "uuid"]))
    if draw(st.booleans()):
        schema["pattern"] = draw(st.sampled_from(["^[a-z]+", "[0-9]", "^[A-Za-z_ -]+$", "^\\d{4}-\\d{2}-\\d{2}$"]))
        schema.pop("maxLength", None)
        schema.pop("minLength", None)
        schema.pop("format", None)
    return schema


@st.composite
def number_schemas(draw):
    kind = draw(st.sampled_from(["integer", "number"]))
    schema: dict = {"type": kind}
    low = draw(st.integers(-1000, 1000))
    high = low + draw(st.integers(2, 500))
    if draw(st.booleans()):
        schema["exclusiveMinimum" if draw(st.booleans()) else "minimum"] = low
    if draw(st.booleans()):
        schema["exclusiveMaximum" if draw(st.booleans()) else "maximum"] = high
    if draw(st.booleans()):
        schema["multipleOf"] = draw(st.sampled_from([1, 2, 5, 0.5] if kind == "number" else [1, 2, 5]))
    return schema


leaves = st.one_of(
    string_schemas(),
    number_schemas(),
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.lists(st.one_of(names, st.integers(0, 9)), min_size=1, max_size=4, unique=True).map(lambda v: {"enum": v}),
    st.just({"const": "fixed"}),
    st.just({}),
)


def _containers(children):
    def obj(draw_props, required_mask, extra):
        props = dict(draw_props)
        required = [name for name, keep in zip(props, required_mask, strict=False) if keep]
        schema = {"type": "object", "properties": props}
        if required:
            schema["required"] = required
        if extra is not None:
            schema["additionalProperties"] = extra
        return schema

    objects = st.builds(
        obj,
        st.dictionaries(names, children, max_size=4),
        st.lists(st.booleans(), max_size=4),
        st.sampled_from([None, False, True]),
    )
    arrays = st.builds(
        lambda items, low, extra: {"type": "array", "items": items, "minItems": low, "maxItems": low + extra},
        children,
        st.integers(0, 2),
        st.integers(0, 3),
    )
    unique_arrays = st.builds(
        lambda items, low: {"type": "array", "items": items, "minItems": low, "uniqueItems": True},
        st.sampled_from([{"type": "string"}, {"type": "integer", "minimum": 0}, {"enum": ["a", "b", "c", "d"]}]),
        st.integers(0, 3),
    )
    nullable = children.map(lambda s: {"anyOf": [s, {"type": "null"}]})
    multi_type = st.just({"type": ["string", "integer"]})
    return st.one_of(objects, arrays, unique_arrays, nullable, multi_type)


schemas = st.recursive(leaves, _containers, max_leaves=12)
tool_schemas = st.builds(
    lambda props, req: {
        "type": "object",
        "properties": dict(props),
        "required": [n for n, keep in zip(dict(props), req, strict=False) if keep],
    },
    st.dictionaries(names, schemas, min_size=1, max_size=5),
    st.lists(st.booleans(), max_size=5),
)


def _valid(schema, value):
    jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(schema).validate(value)


@settings(max_examples=200, deadline=None)
@given(schema=tool_schemas, key=st.text(max_size=6))
@example(  # found by hypothesis: only the last multiple was tried, and it lay on the exclusive bound
    schema={
        "type": "object",
        "properties": {
            "_": {"type": "string"},
            "a": {
                "anyOf": [
                    {
                        "type": "array",
                        "items": {"type": "number", "minimum": 0, "exclusiveMaximum": 3, "multipleOf": 1},
                        "minItems": 2,
                        "maxItems": 2,
                    },
                    {"type": "null"},
                ]
            },
        },
        "required": ["_"],
    },
    key="",
)
def test_generated_values_validate_against_generated_schemas(schema, key):
    value = value_for_schema(schema, DigestRandom(key))
    _valid(schema, value)
    assert value == value_for_schema(schema, DigestRandom(key))


class Address(BaseModel):
    street: str
    zip_code: int


@tool
def book_trip(
    city: str,
    nights: int,
    travellers: list[str],
    budget: float | None = None,
    cabin: Literal["economy", "business"] = "economy",
    address: Address | None = None,
    flexible: bool = False,
) -> str:
    """Book a trip.

    Args:
        city: Destination.
        nights: Nights to stay.
        travellers: Names of the travellers.
        budget: Upper bound in EUR.
        cabin: Cabin class.
        address: Billing address.
        flexible: Whether dates may move.
    """
    return "booked"


_STRANDS_TOOLS = [
    "calculator",
    "current_time",
    "file_read",
    "file_write",
    "http_request",
    "editor",
    "shell",
    "python_repl",
    "journal",
    "think",
    "sleep",
    "environment",
    "memory",
    "use_aws",
    "workflow",
]


def _tool_specs():
    specs = [book_trip.tool_spec]
    for name in _STRANDS_TOOLS:
        module = importlib.import_module(f"strands_tools.{name}")
        spec = getattr(module, "TOOL_SPEC", None) or getattr(module, name).tool_spec
        specs.append(spec)
    return specs


@pytest.mark.parametrize("spec", _tool_specs(), ids=lambda spec: spec["name"])
def test_synthetic_tool_calls_validate_against_real_tool_schemas(spec):
    schema = spec["inputSchema"]["json"]
    seen = 0
    for seed in range(25):
        request = ModelRequest.build([{"role": "user", "content": [{"text": f"use {spec['name']}"}]}], [spec])
        for call in SyntheticPolicy(seed=seed).answer(request).tool_calls:
            assert call.name == spec["name"]
            _valid(schema, call.input)
            seen += 1
    assert seen > 10


def test_a_forced_tool_choice_is_always_honoured():
    request = ModelRequest.build(
        [{"role": "user", "content": [{"text": "book it"}]}],
        [book_trip.tool_spec],
        tool_choice={"tool": {"name": "book_trip"}},
    )
    for seed in range(10):
        calls = SyntheticPolicy(seed=seed).answer(request).tool_calls
        assert [c.name for c in calls] == ["book_trip"]


def test_recursive_refs_terminate_and_unsatisfiable_schemas_fall_back_to_empty_arguments():
    tree = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "label": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
                "required": ["label"],
            }
        },
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/node"}},
        "required": ["root"],
    }
    for key in "abcdefgh":
        _valid(tree, value_for_schema(tree, DigestRandom(key)))
    endless = {
        "$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}, "required": ["next"]}},
        "$ref": "#/$defs/n",
    }
    with pytest.raises(ValueError):
        value_for_schema(endless, DigestRandom("x"))
    spec = {"name": "walk", "description": "d", "inputSchema": {"json": endless}}
    request = ModelRequest.build([{"role": "user", "content": [{"text": "walk"}]}], [spec], tool_choice={"any": {}})
    calls = SyntheticPolicy().answer(request).tool_calls
    assert calls and all(call.input == {} for call in calls)
