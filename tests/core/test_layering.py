"""The faces sit above the core: nothing below `cli/` imports it (the chaos harness reaches the run's signal
handling through `runner.signals`, which the CLI uses too)."""

from __future__ import annotations

import ast
from pathlib import Path

import strands_durable

PACKAGE = Path(strands_durable.__file__).parent


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_nothing_outside_the_cli_imports_the_cli() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)} imports {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] not in ("cli", "__main__.py")
        for name in sorted(_imports(path))
        if name == "strands_durable.cli" or name.startswith("strands_durable.cli.")
    ]
    assert not offenders, "\n".join(offenders)
