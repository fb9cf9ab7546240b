"""Every import path README.md and docs/*.md show works, without a warning: each import statement (in a code block
or inline) and each dotted path (`strands_durable.sdk.storage`, `pytest_strands.point`) is imported in a fresh
interpreter run with `-W error`, so a documented path that is deprecated, or gone, fails here."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
PACKAGES = ("strands_durable", "pytest_strands")

FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
INLINE = re.compile(r"`([^`\n]+)`")
DOTTED = re.compile(r"^((?:strands_durable|pytest_strands)(?:\.\w+)+)")


def _ours(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in PACKAGES


def _import_statements(source: str) -> list[str]:
    """The import statements of our packages in `source` (a code block or an inline span), one line each; a block
    mixing Python with shell or output is read line by line."""
    try:
        return _imports_in(ast.parse(source))
    except SyntaxError:
        return [found for line in source.splitlines() for found in _imports_of_line(line)]


def _imports_of_line(line: str) -> list[str]:
    try:
        return _imports_in(ast.parse(line.strip()))
    except SyntaxError:
        return []


def _imports_in(tree: ast.Module) -> list[str]:
    statements = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and _ours(node.module):
            names = ", ".join(alias.name for alias in node.names)
            statements.append(f"from {node.module} import {names}")
        elif isinstance(node, ast.Import):
            statements += [f"import {alias.name}" for alias in node.names if _ours(alias.name)]
    return statements


def as_code(shown: str) -> str:
    """Python importing what a document shows: an import statement as it is; a dotted path as its longest module
    prefix, then the attributes after it."""
    if shown.startswith(("from ", "import ")):
        return shown
    return (
        "import importlib\n"
        f"parts = {shown.split('.')!r}\n"
        "for end in range(len(parts), 0, -1):\n"
        "    try:\n"
        "        value = importlib.import_module('.'.join(parts[:end]))\n"
        "        break\n"
        "    except ModuleNotFoundError:\n"
        "        if end == 1:\n"
        "            raise\n"
        "for name in parts[end:]:\n"
        "    value = getattr(value, name)\n"
    )


def documented_imports(text: str) -> set[str]:
    """Every path `text` (a markdown document) shows: import statements, one line each, and dotted paths."""
    found: set[str] = set()
    for block in FENCED.findall(text):
        found.update(_import_statements(block))
    outside_blocks = FENCED.sub("", text)
    for span in INLINE.findall(outside_blocks):
        if span.startswith(("from ", "import ")):
            found.update(_import_statements(span))
        elif match := DOTTED.match(span):
            found.add(match.group(1))
    return found


def all_documented_imports() -> list[tuple[str, str]]:
    return sorted(
        (document.relative_to(ROOT).as_posix(), statement)
        for document in DOCUMENTS
        for statement in documented_imports(document.read_text())
    )


def _import_without_warnings(statement: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-W", "error", "-c", statement], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("case", all_documented_imports(), ids=": ".join)
def test_a_documented_import_path_works_without_a_warning(case: tuple[str, str]) -> None:
    document, shown = case
    result = _import_without_warnings(as_code(shown))
    assert result.returncode == 0, f"{document} shows a path that fails under -W error:\n{result.stderr[-2000:]}"


def test_the_documents_show_the_public_paths() -> None:
    """The collection finds what the documents teach (so an empty collection cannot pass unnoticed)."""
    shown = {path for _, path in all_documented_imports()}
    assert "from strands_durable import DurableSessionManager" in shown
    assert "strands_durable.sdk.storage" in shown


MARKDOWN = """
Mark it (`from strands_durable.sdk import non_idempotent`), or see `strands_durable.runner.tools.non_idempotent`.

```python
from strands_durable import (
    RunOptions,
    run_workflow,
)
```

```
$ strands run spec.yaml
from strands_durable.store import LocalStore
```
"""


def test_the_collection_finds_blocks_inline_statements_and_dotted_paths() -> None:
    found = documented_imports(MARKDOWN)
    assert "from strands_durable import RunOptions, run_workflow" in found
    assert "from strands_durable.store import LocalStore" in found
    assert "from strands_durable.sdk import non_idempotent" in found
    assert "strands_durable.runner.tools.non_idempotent" in found
    assert len(found) == 4


@pytest.mark.parametrize(
    ("shown", "works"),
    [
        ("from strands_durable import non_idempotent", True),
        ("import warnings; warnings.warn('old path', DeprecationWarning)", False),
        ("strands_durable.runner.tools.non_idempotent", False),  # deprecated: warns
        ("strands_durable.no_such_module", False),
        ("strands_durable.sdk.storage.DurableStorage", True),
    ],
)
def test_the_check_fails_on_a_warning_or_a_missing_path(shown: str, works: bool) -> None:
    assert (_import_without_warnings(as_code(shown)).returncode == 0) is works
