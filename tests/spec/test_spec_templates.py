"""Templates: sandboxed, strict about undefined names, the strands-cli filters, graph conditions."""

from __future__ import annotations

import pytest

from strands_durable.errors import SpecError
from strands_durable.spec.templates import check_syntax, evaluate_condition, render


def test_render_with_nested_context():
    context = {"steps": [{"response": "alpha"}], "tasks": {"a": {"response": "beta"}}}
    assert render("{{ steps[0].response }}/{{ tasks.a.response }}", context, where="x") == "alpha/beta"


def test_undefined_variable_names_where():
    with pytest.raises(SpecError) as info:
        render("Hello {{ topic }}", {}, where="pattern.config.steps[0].input", source="s.yaml")
    assert str(info.value).startswith("s.yaml: pattern.config.steps[0].input: template error:")
    assert "'topic' is undefined" in info.value.detail


def test_undefined_in_a_condition_is_an_error_not_false():
    with pytest.raises(SpecError, match="has no attribute 'missing'"):
        evaluate_condition("{{ nodes.missing.response == 'x' }}", {"nodes": {}})


def test_sandbox_refuses_python_internals():
    with pytest.raises(SpecError, match=r"sandbox|unsafe|attribute"):
        render("{{ ''.__class__.__mro__[1].__subclasses__() }}", {}, where="x")
    with pytest.raises(SpecError):
        render("{{ items.append(1) }}", {"items": []}, where="x")  # immutable sandbox


def test_filters():
    assert render("{{ text | truncate(8) }}", {"text": "abcdefghijkl"}, where="x") == "abcde..."
    assert render("{{ text | truncate(20) }}", {"text": "short"}, where="x") == "short"
    assert render("{{ value | tojson }}", {"value": {"é": [1, True]}}, where="x") == '{"é": [1, true]}'
    assert render("{{ 'hello world' | title }}", {}, where="x") == "Hello World"
    assert render("{{ t | regex_search('score: (\\\\d+)') }}", {"t": "Score: 87/100"}, where="x") == "87"
    assert render("{{ t | regex_search('zzz') }}", {"t": "abc"}, where="x") == ""
    assert render("{{ items | length }}", {"items": [1, 2]}, where="x") == "2"


def test_trailing_newline_is_kept():
    assert render("line\n", {}, where="x") == "line\n"


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("{{ 'approve' in nodes.review.response.lower() }}", True),
        ("{{ 'reject' in nodes.review.response.lower() }}", False),
        ("{{ nodes.review.iteration >= 3 }}", False),
        ("nodes.review.iteration < 3", True),
        ("else", True),
        ("  else ", True),
        ("{% if nodes.review.iteration > 1 %}yes{% endif %}", True),
        ("{% if nodes.review.iteration > 5 %}yes{% else %}false{% endif %}", False),
    ],
)
def test_conditions(expr, expected):
    context = {"nodes": {"review": {"response": "I APPROVE this", "iteration": 2}}}
    assert evaluate_condition(expr, context) is expected


def test_check_syntax():
    check_syntax("{% for x in xs %}{{ x }}{% endfor %}", "ok")
    with pytest.raises(SpecError) as info:
        check_syntax("{% for x in xs %}", "pattern.config.steps[0].input", source="s.yaml", line=7)
    assert (info.value.line, info.value.key_path) == (7, "pattern.config.steps[0].input")
