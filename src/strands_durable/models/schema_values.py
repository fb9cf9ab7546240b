"""Schema-valid example values for a JSON schema, chosen by a `DigestRandom` (tool call arguments).

Covers what tool schemas use: types (also lists of types), enum/const, string length/format/pattern, numeric
bounds and multipleOf, arrays (min/max items, uniqueItems), objects (required, optional properties,
additionalProperties), anyOf/oneOf/allOf and local `$ref`s (`#/$defs/...`, `#/definitions/...`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from .digest import DigestRandom, canonical_json

_WORDS = ("alpha", "bravo", "delta", "echo", "harbor", "lumen", "orbit", "quartz", "sierra", "tango")
_MAX_DEPTH = 6  # below this, optional properties and array items are left out
_GIVE_UP_DEPTH = 24  # a schema that still requires more nesting is (practically) unsatisfiable
_TYPE_ORDER = ("object", "array", "string", "integer", "number", "boolean", "null")


def value_for_schema(schema: Mapping[str, Any] | bool, rng: DigestRandom) -> Any:
    """A value that validates against `schema` (draft 2020-12 / draft 7 keywords tools use)."""
    root = schema if isinstance(schema, Mapping) else {}
    return _value(schema, rng, root, 0)


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    seen = 0
    while "$ref" in schema and seen < 32:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise ValueError(f"only local $ref is supported, got {ref!r}")
        target: Any = root
        for part in [p for p in ref[1:].split("/") if p]:
            target = target[part.replace("~1", "/").replace("~0", "~")]
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**target, **rest}
        seen += 1
    return schema


def _merge_all_of(schema: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    for part in schema.get("allOf", []):
        part = _resolve(part, root) if isinstance(part, Mapping) else {}
        if "allOf" in part:
            part = _merge_all_of(part, root)
        for key, value in part.items():
            if key == "properties":
                merged["properties"] = {**merged.get("properties", {}), **value}
            elif key == "required":
                merged["required"] = sorted(set(merged.get("required", [])) | set(value))
            else:
                merged.setdefault(key, value)
    return merged


def _infer_types(schema: Mapping[str, Any]) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list) and declared:
        return [t for t in _TYPE_ORDER if t in declared]
    if "properties" in schema or "required" in schema or "additionalProperties" in schema:
        return ["object"]
    if "items" in schema or "minItems" in schema or "prefixItems" in schema:
        return ["array"]
    if any(k in schema for k in ("minLength", "maxLength", "pattern", "format")):
        return ["string"]
    if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
        return ["number"]
    return ["string"]


def _value(schema: Mapping[str, Any] | bool, rng: DigestRandom, root: Mapping[str, Any], depth: int) -> Any:
    if depth > _GIVE_UP_DEPTH:
        raise ValueError("the schema requires values nested deeper than any tool would need")
    if schema is True or schema == {}:
        return rng.choice(_WORDS)
    if schema is False:
        raise ValueError("no value satisfies the schema `false`")
    schema = _resolve(schema, root)
    if "allOf" in schema:
        schema = _merge_all_of(schema, root)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    for key in ("oneOf", "anyOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            rest = {k: v for k, v in schema.items() if k != key}
            if depth >= _MAX_DEPTH:  # prefer a leaf branch deep down so recursion ends
                branches = [b for b in branches if _resolve(b, root).get("type") == "null"] or branches
            branch = rng.choice(branches)
            branch = _resolve(branch, root) if isinstance(branch, Mapping) else branch
            return _value({**rest, **branch} if isinstance(branch, Mapping) else branch, rng, root, depth)
    types = _infer_types(schema)
    kind = "null" if depth >= _MAX_DEPTH and "null" in types else rng.choice(types)
    if kind == "object":
        return _object(schema, rng, root, depth)
    if kind == "array":
        return _array(schema, rng, root, depth)
    if kind == "integer":
        return _integer(schema, rng)
    if kind == "number":
        return _number(schema, rng)
    if kind == "boolean":
        return rng.chance(0.5)
    if kind == "null":
        return None
    return _string(schema, rng)


def _object(schema: Mapping[str, Any], rng: DigestRandom, root: Mapping[str, Any], depth: int) -> dict[str, Any]:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = [name for name in schema.get("required", []) if isinstance(name, str)]
    result: dict[str, Any] = {}
    for name in sorted(properties):
        if name in required or (depth < _MAX_DEPTH - 1 and rng.chance(0.5)):
            result[name] = _value(properties[name], rng, root, depth + 1)
    extra = schema.get("additionalProperties", True)
    for name in required:  # required but not described: any value the extra schema allows
        if name not in result:
            result[name] = _value(extra if isinstance(extra, Mapping) else {}, rng, root, depth + 1)
    minimum = schema.get("minProperties", 0)
    index = 0
    while len(result) < minimum and extra is not False:
        name = f"extra_{index}"
        index += 1
        if name not in result:
            result[name] = _value(extra if isinstance(extra, Mapping) else {}, rng, root, depth + 1)
    return result


def _array(schema: Mapping[str, Any], rng: DigestRandom, root: Mapping[str, Any], depth: int) -> list[Any]:
    prefix = schema.get("prefixItems") or []
    items = schema.get("items", {})
    low = max(int(schema.get("minItems", 0)), len(prefix))
    high = int(schema.get("maxItems", max(low, 3)))
    if depth >= _MAX_DEPTH - 1:
        high = low
    count = rng.between(low, max(low, high))
    values: list[Any] = [_value(p, rng, root, depth + 1) for p in prefix]
    unique = bool(schema.get("uniqueItems"))
    seen = {canonical_json(v) for v in values}
    attempts = 0
    while len(values) < count and attempts < count * 20 + 20:
        attempts += 1
        value = _value(items if items is not None else {}, rng, root, depth + 1)
        key = canonical_json(value)
        if unique and key in seen:
            if len(values) >= low:
                break
            continue
        seen.add(key)
        values.append(value)
    return values


def _bounds(schema: Mapping[str, Any], default_low: float, default_high: float) -> tuple[float, float, bool, bool]:
    low, high = schema.get("minimum"), schema.get("maximum")
    ex_low, ex_high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    low_open = high_open = False
    if isinstance(ex_low, bool):  # draft 4 style
        low_open = ex_low
    elif isinstance(ex_low, (int, float)) and (low is None or ex_low >= low):
        low, low_open = ex_low, True
    if isinstance(ex_high, bool):
        high_open = ex_high
    elif isinstance(ex_high, (int, float)) and (high is None or ex_high <= high):
        high, high_open = ex_high, True
    if low is None and high is None:
        low, high = default_low, default_high
    elif low is None:
        low = high - (default_high - default_low)
    elif high is None:
        high = low + (default_high - default_low)
    return float(low), float(high), low_open, high_open


def _integer(schema: Mapping[str, Any], rng: DigestRandom) -> int:
    low_f, high_f, low_open, high_open = _bounds(schema, 0, 100)
    low = math.floor(low_f) + 1 if low_open and low_f == math.floor(low_f) else math.ceil(low_f)
    high = math.ceil(high_f) - 1 if high_open and high_f == math.ceil(high_f) else math.floor(high_f)
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0 and float(step).is_integer():
        step = int(step)
        first, last = math.ceil(low / step), math.floor(high / step)
        if first <= last:
            return rng.between(first, last) * step
    return rng.between(low, max(low, high))


def _number(schema: Mapping[str, Any], rng: DigestRandom) -> float | int:
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0:
        low, high, _, _ = _bounds(schema, 0, 100)
        first, last = math.ceil(low / step), math.floor(high / step)
        candidates = [k for k in (first, first + 1, last - 1, last) if first <= k <= last]
        start = rng.below(len(candidates)) if candidates else 0
        for k in candidates[start:] + candidates[:start]:  # every candidate, from a chosen one on
            value = k * step
            if _number_ok(schema, value):
                return value
    low, high, _, _ = _bounds(schema, 0, 100)
    for _ in range(16):
        value = round(low + (high - low) * rng.unit(), 3)
        if _number_ok(schema, value):
            return value
    return (low + high) / 2


def _number_ok(schema: Mapping[str, Any], value: float) -> bool:
    low, high, low_open, high_open = _bounds(schema, -math.inf, math.inf)
    if value < low or value > high or (low_open and value == low) or (high_open and value == high):
        return False
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0:
        quotient = value / step
        return abs(quotient - round(quotient)) < 1e-9
    return True


def _string(schema: Mapping[str, Any], rng: DigestRandom) -> str:
    fmt = schema.get("format")
    if fmt == "date":
        text = f"2024-{rng.between(1, 12):02d}-{rng.between(1, 28):02d}"
    elif fmt == "date-time":
        text = f"2024-{rng.between(1, 12):02d}-{rng.between(1, 28):02d}T{rng.between(0, 23):02d}:00:00Z"
    elif fmt == "email":
        text = f"{rng.choice(_WORDS)}@example.com"
    elif fmt in ("uri", "url"):
        text = f"https://example.com/{rng.choice(_WORDS)}"
    elif fmt == "uuid":
        text = "00000000-0000-4000-8000-" + "".join(str(rng.below(10)) for _ in range(12))
    else:
        text = f"{rng.choice(_WORDS)} {rng.choice(_WORDS)}"
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        text = _matching(pattern, text, rng)
    low = int(schema.get("minLength", 0))
    high = schema.get("maxLength")
    while len(text) < low:
        text += "x"
    if isinstance(high, int) and len(text) > high:
        text = text[:high]
    return text


def _matching(pattern: str, preferred: str, rng: DigestRandom) -> str:
    """A string that `re.search` matches with `pattern`; tries common shapes (no general regex inversion)."""
    candidates = [
        preferred,
        preferred.replace(" ", "_"),
        preferred.replace(" ", "-"),
        preferred.split()[0],
        str(rng.between(0, 9999)),
        "abc123",
        "ABC",
        "a",
        "0",
        "2024-01-01",
    ]
    compiled = re.compile(pattern)
    for candidate in candidates:
        if compiled.search(candidate):
            return candidate
    return preferred
