"""Input variables: declared defaults, then the spec's `inputs.values`, then `--var k=v`, each coerced to
the declared type and checked against its `enum`.

Who is at fault decides the exit code: a malformed `--var`, a `--var` value of the wrong type, or a required
input nobody gave is the caller's (UsageError, exit 2); a default or `inputs.values` entry that does not fit
its own declaration is the spec's (SpecError, exit 3, raised already when the spec loads).
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from strands_durable.errors import UsageError
from strands_durable.spec.models import InputVar, Spec

_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INTEGER = re.compile(r"^[+-]?\d+$")
_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


class CoercionError(ValueError):
    """A value that does not fit its declared input type or enum."""


def coerce(value: Any, declared: InputVar) -> Any:
    """`value` as the declared type. Text (from `--var` or a quoted YAML value) is parsed; other values must
    already have the type (an int is accepted as a number). Raises CoercionError."""
    kind = declared.type
    if isinstance(value, str) and kind != "string":
        value = _parse_text(value, kind)
    if not _has_type(value, kind):
        raise CoercionError(f"expected {_article(kind)}, got {type(value).__name__} {value!r}")
    if declared.enum is not None and value not in declared.enum:
        choices = ", ".join(repr(choice) for choice in declared.enum)
        raise CoercionError(f"{value!r} is not one of {choices}")
    return value


def _integer(digits: str) -> int:
    if len(digits.lstrip("+-")) > sys.get_int_max_str_digits():
        raise CoercionError(
            f"an integer of {len(digits)} characters (integers are limited to {sys.get_int_max_str_digits()} digits)"
        )
    return int(digits)


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _parse_text(text: str, kind: str) -> Any:
    stripped = text.strip()
    if kind == "integer":
        if not _INTEGER.fullmatch(stripped):
            raise CoercionError(f"expected an integer, got {text!r}")
        return _integer(stripped)
    if kind == "number":
        if _INTEGER.fullmatch(stripped):
            return _integer(stripped)
        try:
            number = float(stripped)
        except ValueError:
            raise CoercionError(f"expected a number, got {text!r}") from None
        if not math.isfinite(number):
            raise CoercionError(f"expected a finite number, got {text!r}")
        return number
    if kind == "boolean":
        lowered = stripped.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise CoercionError(f"expected a boolean (true/false), got {text!r}")
    try:  # array, object: JSON text
        return json.loads(stripped)
    except json.JSONDecodeError:
        raise CoercionError(f"expected {_article(kind)} as JSON, got {text!r}") from None
    except (ValueError, RecursionError) as exc:  # an integer too long to convert, nesting too deep to decode
        detail = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(":")[0]
        raise CoercionError(f"expected {_article(kind)} as JSON: {detail}") from None


def _has_type(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    return isinstance(value, dict)


def parse_cli_vars(cli_vars: Iterable[str]) -> dict[str, str]:
    """`["topic=AI", "n=3"]` -> `{"topic": "AI", "n": "3"}`; a malformed entry is a UsageError.

    The value is everything after the first `=` (it may contain `=`, spaces, newlines); a later `--var` for
    the same name wins.
    """
    parsed: dict[str, str] = {}
    for item in cli_vars:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not _VAR_NAME.fullmatch(name):
            raise UsageError(f"Invalid --var '{item}': expected NAME=VALUE with NAME like my_var")
        parsed[name] = value
    return parsed


def declared_value_problems(spec: Spec) -> Iterator[tuple[tuple[str, ...], str]]:
    """(key path, detail) for each default or `inputs.values` entry that does not fit its declaration."""
    declared = spec.inputs.declared()
    for section in ("required", "optional"):
        for name, var in getattr(spec.inputs, section).items():
            if var.default is not None:
                try:
                    coerce(var.default, var)
                except CoercionError as exc:
                    yield ("inputs", section, name, "default"), f"default of '{name}': {exc}"
    for name, value in spec.inputs.values.items():
        if name in declared:
            try:
                coerce(value, declared[name])
            except CoercionError as exc:
                yield ("inputs", "values", name), f"value of '{name}': {exc}"


def resolve_variables(spec: Spec, cli_vars: Iterable[str] = ()) -> dict[str, Any]:
    """The run's variables: declared defaults, overridden by `inputs.values`, overridden by `--var`.

    Declared inputs are coerced to their type (string, integer, number, boolean, array/object as JSON) and
    checked against `enum`; undeclared ones are kept as given (text for `--var`). Raises UsageError (exit 2)
    for a malformed `--var`, a `--var` value that does not fit its declaration, or a required input without
    a value.
    """
    declared = spec.inputs.declared()
    resolved: dict[str, Any] = {}
    for name, var in declared.items():
        if var.default is not None:
            resolved[name] = coerce(var.default, var)
    for name, value in spec.inputs.values.items():
        resolved[name] = coerce(value, declared[name]) if name in declared else value
    for name, text in parse_cli_vars(cli_vars).items():
        if name in declared:
            try:
                resolved[name] = coerce(text, declared[name])
            except CoercionError as exc:
                raise UsageError(f"Invalid --var {name}: {exc}") from None
        else:
            resolved[name] = text
    missing = [name for name in spec.inputs.required if name not in resolved]
    if missing:
        flags = " ".join(f"--var {name}=..." for name in missing)
        raise UsageError(f"Missing required input(s): {', '.join(missing)} (pass {flags})")
    return resolved


__all__ = ["CoercionError", "coerce", "declared_value_problems", "parse_cli_vars", "resolve_variables"]
