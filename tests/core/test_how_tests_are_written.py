"""Two rules for the test files themselves (issue 30, item 5):
- a test imports a name the package root exports from the root (`from strands_durable import run_workflow`), the
  way users do, not from the module that defines it (`strands_durable.runner.run`); `strands_durable.sdk`, public
  too (docs/python-agents.md), may be the path a test of it takes;
- a test runs its own checks: no test module uses a test function of another (the S3 tests that hold on SeaweedFS
  and on moto run once on each through one parametrized `server` fixture, tests/s3/conftest.py).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

import strands_durable

TESTS = Path(__file__).resolve().parents[1]
PUBLIC_PATHS = frozenset({"strands_durable", "strands_durable.sdk"})


def private_imports_of_public_names(source: str) -> list[str]:
    """The imports in `source` that take a name the root exports from another module."""
    public = set(strands_durable.__all__)
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom) or node.level or node.module in PUBLIC_PATHS:
            continue
        names = sorted(alias.name for alias in node.names if alias.name in public)
        if names and (node.module or "").startswith("strands_durable"):
            found.append(f"line {node.lineno}: from {node.module} import {', '.join(names)}")
    return found


def uses_of_other_modules_tests(source: str) -> list[str]:
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
        if isinstance(node, ast.Name) and node.id in imported and id(node) not in modules
        if isinstance(node.ctx, ast.Load)
    ]
    return found


def _breaches(rule: Callable[[str], list[str]]) -> list[str]:
    return [
        f"{path.relative_to(TESTS.parent)} {place}"
        for path in sorted(TESTS.rglob("*.py"))
        for place in rule(path.read_text())
    ]


def test_tests_import_the_names_the_root_exports_from_the_root() -> None:
    found = _breaches(private_imports_of_public_names)
    assert not found, "import these from strands_durable:\n" + "\n".join(found)


def test_no_test_module_uses_another_modules_tests() -> None:
    found = _breaches(uses_of_other_modules_tests)
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("rule", "source", "found"),
    [
        (private_imports_of_public_names, "from strands_durable.runner.run import run_workflow, resume", 1),
        (private_imports_of_public_names, "def f():\n    from strands_durable.store import LocalStore, FileOps\n", 1),
        (private_imports_of_public_names, "from strands_durable.store import WrappingStore", 0),
        (private_imports_of_public_names, "from strands_durable import RunOptions", 0),
        (private_imports_of_public_names, "from strands_durable.sdk import DurableSessionManager", 0),
        (
            uses_of_other_modules_tests,
            "from tests.s3 import test_s3_store\ndef test_x(s):\n    test_s3_store.test_y(s)\n",
            1,
        ),
        (uses_of_other_modules_tests, "from tests.s3.test_s3_store import test_y\ndef test_x(s):\n    test_y(s)\n", 1),
        (uses_of_other_modules_tests, "from tests.s3 import test_s3_store\nCHECKS = [test_s3_store.test_y]\n", 1),
        (uses_of_other_modules_tests, "from tests.s3.support import store_for\ndef test_x(s):\n    store_for(s)\n", 0),
    ],
)
def test_the_rules_find_what_they_name(rule: Callable[[str], list[str]], source: str, found: int) -> None:
    assert len(rule(source)) == found
