"""Mutated corpus specs never crash the loader: they load, or raise SpecError (exit 3), nothing else."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strands_durable.errors import ExitCode, SpecError
from strands_durable.spec import Spec, load_spec_text
from tests.corpus import corpus_dir

EXAMPLES = corpus_dir() / "examples"
CORPUS = sorted(EXAMPLES.glob("*.yaml"))

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        [
            "{{",
            "{% for %}",
            "{{ x }}",
            "..",
            "/etc",
            "a/b",
            "hitl",
            "else",
            "chain",
            "graph",
            "$ref",
            "x-idempotent",
        ]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
KEYS = st.one_of(
    st.text(max_size=10),
    st.sampled_from(["type", "agent", "id", "deps", "to", "from", "choose", "when", "$ref", "steps", "prompt"]),
    st.integers(min_value=-3, max_value=3),
)


def containers(data: Any, path: tuple = ()) -> list[tuple]:
    """Paths of every mapping and list in the tree."""
    found = []
    if isinstance(data, dict | list):
        found.append(path)
        items = data.items() if isinstance(data, dict) else enumerate(data)
        for key, value in items:
            found.extend(containers(value, (*path, key)))
    return found


def at(data: Any, path: tuple) -> Any:
    for key in path:
        data = data[key]
    return data


@st.composite
def mutated_specs(draw) -> tuple[Path, Any]:
    path = draw(st.sampled_from(CORPUS))
    data = copy.deepcopy(yaml.safe_load(path.read_text()))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        target = at(data, draw(st.sampled_from(containers(data))))
        keys = list(target.keys()) if isinstance(target, dict) else list(range(len(target)))
        action = draw(st.sampled_from(["delete", "insert", "retype", "rename"]))
        if action == "insert" or not keys:
            if isinstance(target, dict):
                target[draw(KEYS)] = draw(VALUES)
            else:
                target.insert(draw(st.integers(0, len(target))), draw(VALUES))
        elif action == "delete":
            del target[draw(st.sampled_from(keys))]
        elif action == "retype":
            target[draw(st.sampled_from(keys))] = draw(VALUES)
        elif isinstance(target, dict):
            key = draw(st.sampled_from(keys))
            target[draw(KEYS)] = target.pop(key)
    return path, data


def load_or_spec_error(text: str, path: Path) -> None:
    try:
        spec = load_spec_text(text, source_path=path)
    except SpecError as exc:
        assert exc.exit_code == ExitCode.SPEC_INVALID
        assert "\n" not in str(exc)
    else:
        assert isinstance(spec, Spec)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_specs())
def test_mutated_specs_load_or_raise_spec_error(case):
    path, data = case
    load_or_spec_error(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), path)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CORPUS), st.data())
def test_mangled_spec_text_loads_or_raises_spec_error(path, data):
    text = path.read_text()
    for _ in range(data.draw(st.integers(min_value=1, max_value=5))):
        position = data.draw(st.integers(min_value=0, max_value=len(text)))
        end = position + data.draw(st.integers(min_value=0, max_value=20))
        text = text[:position] + data.draw(st.text(max_size=6)) + text[end:]
    load_or_spec_error(text, path)
