"""Above `store/`, code imports only the public store modules and only the names they declare in `__all__`.

The fault kit (faults/) is held to it too: what its harnesses need of the local files (the journal's path and
bytes, seeding a session from a journal prefix, a known prefix) is public on `LocalStore` (docs/storage.md).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

# the interface, the state fold, the file layer, the factory, the wrapper store; the package face; and the views
# of a state (the session document `show --json` and `export` print is the very function session.json is written by)
PUBLIC_MODULES = (
    "strands_durable.store",
    "strands_durable.store.base",
    "strands_durable.store.state",
    "strands_durable.store.events",  # the one constructor of each event kind every writer uses
    "strands_durable.store.fileops",
    "strands_durable.store.factory",
    "strands_durable.store.wrapping",
    "strands_durable.store.views",
    "strands_durable.store.ids",  # the id rule (sdk/ validates ids and agent keys with it)
    "strands_durable.store.s3",  # S3Store, a public name of the package face
)
ABOVE_STORE = (
    "strands_durable/runner",
    "strands_durable/agent",
    "strands_durable/operations",
    "strands_durable/cli",
    "strands_durable/spec",
    "strands_durable/history",
    "strands_durable/models",
    "strands_durable/testing",
    "strands_durable/sdk",
    "strands_durable/faults",
    "strands_durable/temporal",
    "pytest_strands",
)
TOP_LEVEL = ("strands_durable/__init__.py", "strands_durable/crashpoints.py", "strands_durable/errors.py")


def public_names() -> dict[str, set[str]]:
    return {name: set(importlib.import_module(name).__all__) for name in PUBLIC_MODULES}


def boundary_violations(source: str, where: str, public: dict[str, set[str]]) -> list[str]:
    """Every import in `source` of a store module outside `public`, or of a name outside its `__all__`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("strands_durable.store") and alias.name not in public:
                    found.append(f"{where}:{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            module = node.module
            if not module.startswith("strands_durable.store"):
                continue
            if module not in public:
                found.append(f"{where}:{node.lineno}: from {module} import ...")
                continue
            for alias in node.names:
                if alias.name not in public[module]:
                    found.append(f"{where}:{node.lineno}: from {module} import {alias.name} (not in its __all__)")
    return found


def sources_above_store() -> list[Path]:
    files = [SRC / name for name in TOP_LEVEL]
    for folder in ABOVE_STORE:
        files.extend(sorted((SRC / folder).rglob("*.py")))
    return [path for path in files if path.exists()]


def test_code_above_the_store_imports_only_public_store_modules_and_names() -> None:
    public = public_names()
    violations = []
    for path in sources_above_store():
        violations += boundary_violations(path.read_text(), str(path.relative_to(SRC)), public)
    assert violations == []


def test_the_scope_covers_every_package_above_the_store() -> None:
    package = SRC / "strands_durable"
    below_or_excluded = {"store", "__pycache__"}
    covered = {Path(folder).name for folder in ABOVE_STORE}
    for child in package.iterdir():
        if child.is_dir() and child.name not in below_or_excluded and (child / "__init__.py").exists():
            assert child.name in covered, f"{child.name}/ is above the store but not checked"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from strands_durable.store.local import LocalStore", "from strands_durable.store.local import"),
        ("import strands_durable.store.journal", "import strands_durable.store.journal"),
        ("from strands_durable.store.state import _message", "_message (not in its __all__)"),
        ("def f():\n    from strands_durable.store.layout import SESSION_JSON", "strands_durable.store.layout"),
        ("from strands_durable.store import layout", "from strands_durable.store import layout"),
        ("from strands_durable.store.base import JOURNAL_NAME", "JOURNAL_NAME (not in its __all__)"),
    ],
)
def test_the_boundary_check_catches_a_private_import(source: str, expected: str) -> None:
    found = boundary_violations(source, "example.py", public_names())
    assert len(found) == 1 and expected in found[0], found


def test_public_modules_declare_only_names_they_define() -> None:
    for name, names in public_names().items():
        module = importlib.import_module(name)
        for item in names:
            assert hasattr(module, item), f"{name}.__all__ names {item}, which it does not define"


# the names that say which implementation a store is; the package root exports some of them as public API
IMPLEMENTATION_NAMES = frozenset(
    {"LocalStore", "LocalSession", "MemoryStore", "S3Store", "S3Session", "Objects", "make_client"}
)


def modules_naming_an_implementation() -> set[str]:
    """The modules above `store/` that import a store implementation's name, as `store/base.py` names them; the
    package root, which exports them, is not one."""
    found = set()
    for path in sources_above_store():
        if path == SRC / "strands_durable/__init__.py":
            continue
        imported = {
            alias.name
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("strands_durable")
            for alias in node.names
        }
        if imported & IMPLEMENTATION_NAMES:
            relative = path.relative_to(SRC / "strands_durable").as_posix()
            found.add(relative)
    return found


def test_the_store_interface_lists_every_module_above_it_that_names_an_implementation() -> None:
    docstring = importlib.import_module("strands_durable.store.base").__doc__ or ""
    bullets = [line for line in docstring.splitlines() if line.startswith("- ")]
    listed = {path for line in bullets for path in re.findall(r"`((?:\w+/)+(?:\w+\.py)?)`", line)}
    assert modules_naming_an_implementation() == listed
