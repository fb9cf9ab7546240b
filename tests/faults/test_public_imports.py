"""The tests of the fault kit and of the plugin import a public name from its public place: a name the package
root exports (`strands_durable.__all__`) comes from the root or from the public face that declares it
(`strands_durable.sdk`, `strands_durable.store`, `strands_durable.crashpoints`), never from the module that
happens to define it."""

from __future__ import annotations

import ast
from pathlib import Path

import strands_durable

TESTS = Path(__file__).resolve().parents[1]
PUBLIC_FACES = {"strands_durable", "strands_durable.sdk", "strands_durable.store", "strands_durable.crashpoints"}


def private_imports_of_public_names(source: str, where: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom) or not node.module or node.level:
            continue
        if not node.module.startswith("strands_durable") or node.module in PUBLIC_FACES:
            continue
        for alias in node.names:
            if alias.name in strands_durable.__all__:
                found.append(f"{where}:{node.lineno}: {alias.name} from {node.module}")
    return found


def test_faults_and_plugin_tests_import_public_names_from_the_public_api() -> None:
    found = []
    for folder in ("faults", "plugin"):
        for path in sorted((TESTS / folder).rglob("*.py")):
            found += private_imports_of_public_names(path.read_text(), str(path.relative_to(TESTS)))
    assert found == []


def test_an_import_of_a_public_name_from_its_defining_module_is_found() -> None:
    source = "from strands_durable.store.local import LocalStore\nfrom strands_durable import run_workflow\n"
    assert private_imports_of_public_names(source, "t.py") == ["t.py:1: LocalStore from strands_durable.store.local"]
