"""Turn pydantic validation errors and reference problems into one SpecError line: file, line, key path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from strands_durable.errors import SpecError
from strands_durable.spec.document import Document, KeyPath, format_key_path


@dataclass(frozen=True)
class Problem:
    """A defect of a valid-shaped spec at a key path (a reference, a template), found by `spec.references`."""

    path: KeyPath
    detail: str
    template_line: int | None = None
    """For a template error: the line within the template text (1-based)."""
    warning: bool = False
    """A defect on a path that may never run: reported by `validate`, fatal only if the run renders it."""


def key_path_of(loc: tuple[Any, ...], data: Any, error_type: str) -> KeyPath:
    """The key path in the user's data for a pydantic `loc`, without the union tags pydantic inserts.

    Our union tags are written `<like-this>` and dropped. Other loc elements are kept when the data has them
    at that point; the last one is also kept when it names a missing key. Anything else (pydantic's own
    `[key]`, a member type's name) is dropped.
    """
    path: list[str | int] = []
    current = data
    for index, part in enumerate(loc):
        last = index == len(loc) - 1
        if isinstance(part, str) and part.startswith("<") and part.endswith(">"):
            continue  # a union tag (our tags are all written <like-this>)
        if isinstance(current, dict) and part in current:
            path.append(part if isinstance(part, str) else str(part))
            current = current[part]
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            path.append(part)
            current = current[part]
        elif last and error_type == "missing":
            path.append(str(part))
    return tuple(path)


def _shorten(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_OWN_MESSAGES = frozenset({"invalid_pattern", "invalid_unit", "invalid_tool", "invalid_mcp"})


def _spec_keys() -> set[str]:
    """Every key a spec may hold somewhere (each spec model's field names and aliases)."""
    from strands_durable.spec.fields import SpecModel

    keys: set[str] = set()
    pending: list[type] = [SpecModel]
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        for name, field in getattr(model, "model_fields", {}).items():
            keys.add(field.alias or name)
    return keys


def near_miss(key: str, candidates: list[str]) -> str | None:
    """The candidate `key` most likely misspells (`descriptionz` -> `description`), or None."""
    import difflib

    close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.75)
    return close[0] if close else None


def did_you_mean(key: str, candidates: list[str]) -> str:
    """` (did you mean 'description'?)` for a near miss among `candidates`, else nothing."""
    close = near_miss(key, candidates)
    return f" (did you mean '{close}'?)" if close else ""


def _pattern_type_given(pattern: Any) -> str:
    """`, got 'chian' (did you mean 'chain'?)` after the list of pattern types ('' when `type` is missing)."""
    from strands_durable.spec.patterns import PATTERN_TYPES

    given = pattern.get("type") if isinstance(pattern, dict) else None
    if given is None:
        return ""
    return f", got {_shorten(given)}" + did_you_mean(str(given), list(PATTERN_TYPES))


def describe(error: dict[str, Any], path: KeyPath, siblings_missing: list[str] | None = None) -> str:
    """One error in words; an unknown key gets a "did you mean" (first among the keys missing beside it)."""
    kind = error["type"]
    if kind == "extra_forbidden":
        key = str(path[-1] if path else error["loc"][-1])
        hint = did_you_mean(key, siblings_missing or []) or did_you_mean(key, sorted(_spec_keys()))
        return f"unknown key '{key}'{hint}"
    if kind == "missing":
        return f"missing required key '{path[-1] if path else error['loc'][-1]}'"
    message = error["msg"]
    if kind == "invalid_pattern":
        return message + _pattern_type_given(error.get("input"))
    if kind in _OWN_MESSAGES or kind.startswith("value_"):
        return message.removeprefix("Value error, ")
    return f"{message[0].lower()}{message[1:]} (got {_shorten(error.get('input'))})"


def one_line(text: str) -> str:
    """Error messages are one line, even when a key or value the user wrote has line breaks."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def single_line_error(exc: SpecError) -> SpecError:
    """`exc` with line breaks in its detail and key path escaped (the CLI prints exactly one line)."""
    detail, key_path = one_line(exc.detail), one_line(exc.key_path) if exc.key_path else None
    if (detail, key_path) == (exc.detail, exc.key_path) and "\n" not in exc.file:
        return exc
    return SpecError(one_line(exc.file), detail, key_path=key_path, line=exc.line)


def from_validation(exc: ValidationError, document: Document, file: str) -> SpecError:
    errors = exc.errors(include_url=False)

    def missing_beside(error: dict[str, Any]) -> list[str]:
        parent = tuple(error["loc"])[:-1]
        return [str(e["loc"][-1]) for e in errors if e["type"] == "missing" and tuple(e["loc"])[:-1] == parent]

    # a misspelt required key shows as "missing 'prompt'" and "unknown 'promt'": name the misspelling
    misspelt = [
        e for e in errors if e["type"] == "extra_forbidden" and did_you_mean(str(e["loc"][-1]), missing_beside(e))
    ]
    first = misspelt[0] if misspelt else errors[0]
    path = key_path_of(tuple(first["loc"]), document.data, first["type"])
    detail = describe(first, path, missing_beside(first))
    if len(errors) > 1:
        detail += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return SpecError(file, detail, key_path=format_key_path(path) or None, line=document.line_of(path))


def from_problems(problems: list[Problem], document: Document, file: str) -> SpecError:
    """The first problem, with the exact line of a template error when the file says where its text is."""
    first = problems[0]
    detail = first.detail
    if len(problems) > 1:
        detail += f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})"
    line = None
    if first.template_line is not None:
        line = document.line_in_text(first.path, first.template_line)
    if line is None:
        line = document.line_of(first.path)
    return SpecError(file, one_line(detail), key_path=one_line(format_key_path(first.path)) or None, line=line)


__all__ = [
    "Problem",
    "describe",
    "did_you_mean",
    "from_problems",
    "from_validation",
    "key_path_of",
    "near_miss",
    "one_line",
    "single_line_error",
]
