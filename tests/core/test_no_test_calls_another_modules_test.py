"""A test runs its own checks: no test module calls a test function of another module (the S3 tests that hold on
SeaweedFS and on moto run once on each through one parametrized `server` fixture, tests/s3/conftest.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


def calls_of_other_modules_tests(source: str) -> list[str]:
    """The places in `source` that use a `test_*` function of another test module: through the module
    (`test_s3_store.test_x`, called or passed on) or imported by name (`from tests.s3.test_s3_store import test_x`)."""
    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests")
        for alias in node.names
        if alias.name.startswith("test_")
    }
    through_a_module = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported
    ]
    modules = {id(node.value) for node in through_a_module}
    found = [f"line {node.lineno}: {ast.unparse(node)}" for node in through_a_module if node.attr.startswith("test_")]
    found += [
        f"line {node.lineno}: {node.id}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Name)
        and node.id in imported
        and id(node) not in modules
        and isinstance(node.ctx, ast.Load)
    ]
    return found


def test_no_test_module_calls_another_modules_tests() -> None:
    found = [
        f"{path.relative_to(TESTS.parent)} {call}"
        for path in sorted(TESTS.rglob("test_*.py"))
        for call in calls_of_other_modules_tests(path.read_text())
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("source", "calls"),
    [
        ("from tests.s3 import test_s3_store\ndef test_x(s, p):\n    test_s3_store.test_y(s, p)\n", 1),
        ("from tests.s3.test_s3_store import test_y\ndef test_x(s, p):\n    test_y(s, p)\n", 1),
        ("from tests.s3.support import store_for\ndef test_x(s, p):\n    store_for(s, p)\n", 0),
        ("def helper():\n    pass\ndef test_x():\n    helper()\n", 0),
        ("from tests.s3 import test_s3_store\nCHECKS = [test_s3_store.test_y, test_s3_store.test_z]\n", 2),
    ],
)
def test_the_check_finds_a_call_of_another_modules_test(source: str, calls: int) -> None:
    assert len(calls_of_other_modules_tests(source)) == calls
