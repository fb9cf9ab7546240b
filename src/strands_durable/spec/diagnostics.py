"""Turn pydantic validation errors and reference problems into one SpecError line: file, line, key path."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from strands_durable.errors import SpecError
from strands_durable.spec.document import Document, KeyPath, format_key_path

if TYPE_CHECKING:
    from strands_durable.spec.references import Problem


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


def describe(error: dict[str, Any], path: KeyPath) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"unknown key '{path[-1] if path else error['loc'][-1]}'"
    if kind == "missing":
        return f"missing required key '{path[-1] if path else error['loc'][-1]}'"
    message = error["msg"]
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
    first = errors[0]
    path = key_path_of(tuple(first["loc"]), document.data, first["type"])
    detail = describe(first, path)
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


__all__ = ["describe", "from_problems", "from_validation", "key_path_of", "one_line", "single_line_error"]
