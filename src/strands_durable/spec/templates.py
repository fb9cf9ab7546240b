"""Jinja2 templates for specs: one sandboxed environment, strict about undefined names, with compile caching.

Every template in a spec (prompts, step inputs, artifact paths and contents, graph `when` conditions) is
rendered here, so that loading (syntax only) and running (rendering) agree on what a template means.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import jinja2
import jinja2.meta
from jinja2 import nodes as _nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from strands_durable.errors import SpecError
from strands_durable.spec.diagnostics import single_line_error

ELSE = "else"
"""The graph `when` value that always holds: the fallback choice."""

_DEFAULT_SOURCE = "template"


def _truncate(value: Any, length: int = 100, end: str = "...") -> str:
    """Cut text to at most `length` characters, the last ones replaced by `end` when it was cut."""
    text = str(value)
    if len(text) <= length:
        return text
    return text[: max(length - len(end), 0)] + end


def _tojson(value: Any, indent: int | None = None) -> str:
    """JSON text of a value, non-ASCII kept as is (the text goes to a model, not to HTML)."""
    return json.dumps(value, ensure_ascii=False, indent=indent, default=str)


def _title(value: Any) -> str:
    return str(value).title()


def _regex_search(value: Any, pattern: str, ignorecase: bool = True) -> str:
    """The first capture group of the first match (the whole match without groups); '' when none."""
    try:
        match = re.search(pattern, str(value), re.IGNORECASE if ignorecase else 0)
    except re.error as exc:
        raise jinja2.TemplateRuntimeError(f"regex_search: bad pattern {pattern!r}: {exc}") from exc
    if match is None:
        return ""
    return match.group(1) if match.groups() else match.group(0)


def _build_environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )
    env.filters.update(truncate=_truncate, tojson=_tojson, title=_title, regex_search=_regex_search)
    return env


ENVIRONMENT = _build_environment()
"""The one environment every spec template is compiled in."""


@lru_cache(maxsize=2048)
def _compile(template: str) -> jinja2.Template:
    return ENVIRONMENT.from_string(template)


@lru_cache(maxsize=1024)
def _compile_expression(expression: str) -> Any:
    return ENVIRONMENT.compile_expression(expression, undefined_to_none=False)


def _fail(where: str, detail: str, source: str | None, line: int | None = None) -> SpecError:
    return single_line_error(SpecError(source or _DEFAULT_SOURCE, detail, key_path=where, line=line))


def _syntax_detail(exc: jinja2.TemplateSyntaxError) -> str:
    return f"template syntax error: {exc.message}"


def _runtime_detail(exc: Exception) -> str:
    if isinstance(exc, jinja2.UndefinedError):
        return f"template error: {exc.message}"
    if isinstance(exc, SecurityError):
        return f"template refused by the sandbox: {exc}"
    return f"template error: {type(exc).__name__}: {exc}"


def syntax_error(template: str, *, condition: bool = False) -> tuple[str, int] | None:
    """(detail, line within the template) of the template's syntax error, or None when it compiles.

    With `condition`, the text is read as a graph `when` condition (see `evaluate_condition`).
    """
    body = _condition_expression(template) if condition else None
    if condition and template.strip() == ELSE:
        return None
    try:
        if body is None:
            _compile(template)
        else:
            _compile_expression(body)
    except jinja2.TemplateSyntaxError as exc:
        return _syntax_detail(exc), exc.lineno or 1
    return None


def check_syntax(template: str, where: str, *, source: str | None = None, line: int | None = None) -> None:
    """Compile `template` (no rendering); a syntax error becomes a SpecError naming `where`."""
    error = syntax_error(template)
    if error is not None:
        raise _fail(where, error[0], source, line)


def render(template: str, context: Mapping[str, Any], *, where: str, source: str | None = None) -> str:
    """Render `template` with `context`.

    Undefined names, sandbox violations and any other failure inside the template raise SpecError naming
    `where` (a key path such as `pattern.config.steps[1].input`) and `source` (the spec file) when given.
    """
    try:
        return _compile(template).render(context)
    except jinja2.TemplateSyntaxError as exc:
        raise _fail(where, _syntax_detail(exc), source) from None
    except Exception as exc:  # a template may fail in any way its expressions can
        raise _fail(where, _runtime_detail(exc), source) from None


_SINGLE_EXPRESSION = re.compile(r"^\s*\{\{(?P<body>.*)\}\}\s*$", re.DOTALL)


def _condition_expression(expr: str) -> str | None:
    """The bare expression of a condition, or None when it is a template mixing text and tags."""
    match = _SINGLE_EXPRESSION.match(expr)
    if match is not None and "{{" not in match["body"] and "}}" not in match["body"]:
        return match["body"]
    if "{{" in expr or "{%" in expr:
        return None
    return expr


_FALSE_TEXT = frozenset({"", "false", "0", "no", "none", "off"})


def check_condition_syntax(expr: str, where: str, *, source: str | None = None, line: int | None = None) -> None:
    """Compile a graph `when` condition without evaluating it."""
    error = syntax_error(expr, condition=True)
    if error is not None:
        raise _fail(where, error[0], source, line)


def evaluate_condition(
    expr: str, context: Mapping[str, Any], *, where: str = "when", source: str | None = None
) -> bool:
    """Evaluate a graph `when` condition: `else`, `{{ expression }}`, a bare expression, or a template.

    A template that mixes text and tags is rendered and its text read as a boolean ('', 'false', '0',
    'no', 'none' and 'off' are false). Undefined names are errors, as in `render`.
    """
    if expr.strip() == ELSE:
        return True
    body = _condition_expression(expr)
    if body is None:
        return render(expr, context, where=where, source=source).strip().lower() not in _FALSE_TEXT
    try:
        return bool(_compile_expression(body)(**context))
    except jinja2.TemplateSyntaxError as exc:
        raise _fail(where, _syntax_detail(exc), source) from None
    except Exception as exc:
        raise _fail(where, _runtime_detail(exc), source) from None


def _parsed(template: str, *, condition: bool) -> _nodes.Template | None:
    """The template's syntax tree (a condition's bare expression read as `{{ expression }}`); None when it does
    not compile (syntax errors are reported by `check_syntax`)."""
    if condition:
        if template.strip() == ELSE:
            return None
        body = _condition_expression(template)
        if body is not None:
            template = "{{ (" + body + ") }}"
    try:
        return ENVIRONMENT.parse(template)
    except jinja2.TemplateSyntaxError:
        return None


def referenced_names(template: str, *, condition: bool = False) -> set[str]:
    """The names a template reads from its context: what it `{% set %}`s or loops over itself is not counted."""
    tree = _parsed(template, condition=condition)
    return set() if tree is None else set(jinja2.meta.find_undeclared_variables(tree))


def constant_indexes(template: str, name: str, *, condition: bool = False) -> set[int]:
    """The constant non-negative indexes a template reads of the context list `name` (`steps[2]` -> {2})."""
    tree = _parsed(template, condition=condition)
    if tree is None or name not in jinja2.meta.find_undeclared_variables(tree):
        return set()
    found: set[int] = set()
    for item in tree.find_all(_nodes.Getitem):
        target, value = item.node, getattr(item.arg, "value", None)
        named = isinstance(target, _nodes.Name) and target.name == name and isinstance(item.arg, _nodes.Const)
        if named and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            found.add(value)
    return found


_COMPARISONS = {"in": "in", "notin": "in", "eq": "==", "ne": "=="}


def compared_literals(expr: str) -> list[tuple[str, str]]:
    """The string literals a `when` condition compares with `in` / `not in` (`'approve' in x.lower()`) or `==` /
    `!=` (`x.strip() == 'done'`), as (operator, literal) in order of appearance: what an answer must contain
    (`in`) or be (`==`) for the condition to decide either way. Read from the template's syntax tree."""
    tree = _parsed(expr, condition=True)
    if tree is None:
        return []
    found: list[tuple[str, str]] = []
    for compare in tree.find_all(_nodes.Compare):
        operands = [compare.expr, *(operand.expr for operand in compare.ops)]
        for index, operand in enumerate(compare.ops):
            kind = _COMPARISONS.get(operand.op)
            if kind is None:
                continue
            for side in (operands[index], operands[index + 1]):
                if isinstance(side, _nodes.Const) and isinstance(side.value, str) and side.value:
                    found.append((kind, side.value))
    return list(dict.fromkeys(found))


__all__ = [
    "ELSE",
    "ENVIRONMENT",
    "check_condition_syntax",
    "check_syntax",
    "compared_literals",
    "constant_indexes",
    "evaluate_condition",
    "referenced_names",
    "render",
    "syntax_error",
]
