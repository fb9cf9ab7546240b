"""No import loops in `src/`: the module graph's strongly connected components each hold one module.

The rule (issue 30): an edge is every `import` / `from ... import` anywhere in a module, inside functions and
under `if TYPE_CHECKING:` included, so a loop cannot hide behind a lazy or type-only import. `from P import name`
through a package's face is an edge to the submodule that defines `name` (followed through lazy export tables);
a package `__init__` re-exporting its own submodules draws no edge. Imports of modules outside `src/` draw none.
A second check follows what importing runs besides (the package faces above an imported module), which finds a
loop that passes through a face, such as `store/factory.py -> store/s3/__init__.py -> store/s3/outputs.py ->
store/factory.py` was.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
TOP_PACKAGES = ("strands_durable", "pytest_strands")


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    tree: ast.Module = field(repr=False)


def collect_modules(src: Path, packages: Iterable[str]) -> dict[str, Module]:
    """Every module of `packages` under `src`, by dotted name (a package by its own name, for its `__init__`)."""
    modules: dict[str, Module] = {}
    for package in packages:
        for path in sorted((src / package).rglob("*.py")):
            parts = list(path.relative_to(src).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            name = ".".join(parts)
            modules[name] = Module(name, path, is_package, ast.parse(path.read_text(), filename=str(path)))
    return modules


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    """The absolute module a `from` statement names (relative imports resolved against `module`)."""
    if node.level == 0:
        return node.module or ""
    base = module.name.split(".")
    if not module.is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _lazy_exports(package: Module) -> dict[str, str]:
    """A package face's PEP 562 table: a dict literal mapping a public name to the module that defines it, spelled
    absolute (`"strands_durable.runner.run"`) or relative to the package (`"contracts"`)."""
    table: dict[str, str] = {}
    for node in ast.walk(package.tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                strings = [item.value for item in (key, value) if isinstance(item, ast.Constant)]
                if len(strings) == 2 and all(isinstance(text, str) for text in strings):
                    table[strings[0]] = strings[1]
    return table


def defining_module(package: str, name: str, modules: dict[str, Module], seen: frozenset[str] = frozenset()) -> str:
    """The module that defines `name` as `from package import name` reaches it: a submodule of that name, else
    where the package face imports it from or lazily exports it from (followed through further faces), else the
    package itself."""
    if f"{package}.{name}" in modules:
        return f"{package}.{name}"
    face = modules[package]
    if not face.is_package or package in seen:
        return package
    seen = seen | {package}
    for node in ast.walk(face.tree):
        if isinstance(node, ast.ImportFrom) and any((alias.asname or alias.name) == name for alias in node.names):
            source = _absolute(face, node)
            original = next(alias.name for alias in node.names if (alias.asname or alias.name) == name)
            if source in modules:
                return defining_module(source, original, modules, seen)
    lazy = _lazy_exports(face).get(name)
    for source in (lazy, f"{package}.{lazy}") if lazy else ():
        if source in modules:
            return defining_module(source, name, modules, seen)
    return package


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _imported(module: Module, nodes: Iterable[ast.AST], modules: dict[str, Module]) -> set[str]:
    """The modules of `modules` that the import statements among `nodes` reach, by the rule above."""
    targets: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            if source in modules:
                targets.update(defining_module(source, alias.name, modules) for alias in node.names)
    return targets - {module.name}


def import_edges(modules: dict[str, Module]) -> dict[str, set[str]]:
    """module -> the modules of `modules` it imports, by the rule in this file's docstring."""
    edges: dict[str, set[str]] = {}
    for module in modules.values():
        targets = _imported(module, ast.walk(module.tree), modules)
        if module.is_package:  # a face re-exporting its own submodules draws no edge
            targets = {target for target in targets if not _within(target, module.name)}
        edges[module.name] = targets
    return edges


def edges_through_faces(modules: dict[str, Module], edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """`edges` plus what importing runs besides: importing a module runs each package face above it that the
    importer is not inside, and a face runs the own submodules its top level imports (a lazy export runs nothing
    until it is used). A loop here is one that `import_edges` misses because it passes through a face."""
    running = {name: set(targets) for name, targets in edges.items()}
    for module in modules.values():
        if module.is_package:
            eager = _imported(module, module.tree.body, modules)
            running[module.name] |= {target for target in eager if _within(target, module.name)}
        for target in edges[module.name]:
            parts = target.split(".")
            faces = {".".join(parts[:end]) for end in range(1, len(parts))}
            running[module.name] |= {face for face in faces if face in modules and not _within(module.name, face)}
    return running


def strongly_connected_components(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the graph is a few hundred modules deep at most)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def import_loops(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every component of more than one module."""
    return [component for component in strongly_connected_components(edges) if len(component) > 1]


def _describe(loop: list[str], edges: dict[str, set[str]]) -> str:
    inside = set(loop)
    lines = [f"{len(loop)} modules import each other:"]
    lines += [f"  {module} -> {', '.join(sorted(edges[module] & inside))}" for module in loop]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def src_modules() -> dict[str, Module]:
    return collect_modules(SRC, TOP_PACKAGES)


def test_src_has_no_import_loops(src_modules: dict[str, Module]) -> None:
    edges = import_edges(src_modules)
    loops = import_loops(edges)
    assert not loops, "\n".join(_describe(loop, edges) for loop in loops)


def test_src_has_no_import_loops_through_package_faces(src_modules: dict[str, Module]) -> None:
    edges = edges_through_faces(src_modules, import_edges(src_modules))
    loops = import_loops(edges)
    assert not loops, "\n".join(_describe(loop, edges) for loop in loops)


def _tree(root: Path, files: dict[str, str]) -> Path:
    """Write `files` under `root`; every folder is a package (an empty `__init__.py` unless given)."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        for folder in path.relative_to(root).parents[:-1]:
            (root / folder / "__init__.py").touch()
    return root


FUNCTION_IMPORT = {"pkg/a.py": "import pkg.b\n", "pkg/b.py": "def f():\n    from pkg import a\n"}
TYPE_ONLY = {"pkg/a.py": "if TYPE_CHECKING:\n    from pkg.b import B\n", "pkg/b.py": "from .a import A\n"}
THROUGH_A_FACE = {
    "pkg/sub/__init__.py": "from pkg.sub.impl import Thing\n",
    "pkg/sub/impl.py": "from pkg.user import helper\n",
    "pkg/user.py": "from pkg.sub import Thing\n",
}
LAZY_EXPORT = {
    "pkg/__init__.py": "_EXPORTS = {'Thing': 'pkg.impl'}\n",
    "pkg/impl.py": "import pkg.user\n",
    "pkg/user.py": "from pkg import Thing\n",
}
FACE_OWN_SUBMODULES = {
    "pkg/__init__.py": "from pkg.impl import Thing\nfrom pkg import user\n",
    "pkg/impl.py": "def f():\n    import pkg.user\n",
    "pkg/user.py": "from pkg.other import x\n",
    "pkg/other.py": "x = 1\n",
}


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(FUNCTION_IMPORT, [["pkg.a", "pkg.b"]], id="an import inside a function counts"),
        pytest.param(TYPE_ONLY, [["pkg.a", "pkg.b"]], id="a type-only import counts, and a relative one"),
        pytest.param(THROUGH_A_FACE, [["pkg.sub.impl", "pkg.user"]], id="a name through a face: its module"),
        pytest.param(LAZY_EXPORT, [["pkg.impl", "pkg.user"]], id="a lazily exported name is followed to its module"),
        pytest.param(FACE_OWN_SUBMODULES, [], id="a face re-exporting its own submodules draws no edge"),
    ],
)
def test_the_loop_finder(tmp_path: Path, files: dict[str, str], expected: list[list[str]]) -> None:
    edges = import_edges(collect_modules(_tree(tmp_path, files), ["pkg"]))
    assert import_loops(edges) == expected


FACE_LOOP = {
    "pkg/store/factory.py": "def open_store():\n    from pkg.store.s3 import S3Store\n",
    "pkg/store/s3/__init__.py": "from pkg.store.s3.outputs import S3Output\nfrom pkg.store.s3.store import S3Store\n",
    "pkg/store/s3/store.py": "class S3Store: ...\n",
    "pkg/store/s3/outputs.py": "from pkg.store.factory import open_store\n",
}


def test_a_loop_through_a_package_face_is_found_only_by_following_faces(tmp_path: Path) -> None:
    modules = collect_modules(_tree(tmp_path, FACE_LOOP), ["pkg"])
    edges = import_edges(modules)
    assert import_loops(edges) == []
    assert import_loops(edges_through_faces(modules, edges)) == [
        ["pkg.store.factory", "pkg.store.s3", "pkg.store.s3.outputs"]
    ]
