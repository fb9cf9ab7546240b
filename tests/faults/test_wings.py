"""The fault kit's three wings import one way: `kit/` (the vocabulary) imports no other part of `faults/`, `classes/`
(the fault classes and their registry) imports only the kit, `agents/` (chaos for Python agents) the kit and the
classes, `backends/` (the gate for session backends) the kit, the classes and the agents; no wing imports the
drivers at the top of `faults/` (suite, soak, golden-file cache), which the faces call.
Every import counts, also one inside a function or under `if TYPE_CHECKING:`. And the golden run is one small base
with a workflow's and an agent's on it: no code outside kit/golden.py switches on which one it has."""

from __future__ import annotations

import ast
from pathlib import Path

import strands_durable.faults

FAULTS = Path(strands_durable.faults.__file__).parent
PACKAGE = "strands_durable.faults"
WINGS = ("kit", "classes", "agents", "backends")
MAY_IMPORT = {
    "kit": {"kit"},
    "classes": {"kit", "classes"},
    "agents": {"kit", "classes", "agents"},
    "backends": {"kit", "classes", "agents", "backends"},
}


def faults_imports(path: Path) -> set[str]:
    """Every module of `strands_durable.faults` that the file imports (`from strands_durable.faults import suite`
    names the module `suite`)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module == PACKAGE:
            found.update(f"{PACKAGE}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {name for name in found if name.startswith(PACKAGE + ".")}


def part_of(module: str) -> str:
    """`kit`, `classes`, `agents`, `backends`, or the top-level module's name (a driver: suite, soak, golden_file)."""
    return module.removeprefix(PACKAGE + ".").split(".")[0]


def direction_breaks(root: Path = FAULTS) -> list[str]:
    breaks = []
    for wing in WINGS:
        for path in sorted((root / wing).rglob("*.py")):
            for module in sorted(faults_imports(path)):
                if part_of(module) not in MAY_IMPORT[wing]:
                    breaks.append(f"{path.relative_to(root)} imports {module}")
    return breaks


def test_each_wing_is_a_folder_of_modules():
    for wing in WINGS:
        modules = [p.name for p in (FAULTS / wing).glob("*.py") if p.name != "__init__.py"]
        assert len(modules) >= 3, f"faults/{wing}/ holds {modules}"


def test_the_kit_imports_no_class_or_agent_module_and_the_classes_no_agent_module():
    assert direction_breaks() == []


def test_a_kit_module_importing_a_class_is_found(tmp_path):
    for wing in WINGS:
        (tmp_path / wing).mkdir()
    (tmp_path / "kit" / "judge.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from strands_durable.faults.classes.kill import explore_kill\n"
        "def rule():\n    from strands_durable.faults import suite\n"
    )
    (tmp_path / "classes" / "kill.py").write_text("from strands_durable.faults.agents import engine\n")
    assert direction_breaks(tmp_path) == [
        "kit/judge.py imports strands_durable.faults.classes.kill",
        "kit/judge.py imports strands_durable.faults.suite",
        "classes/kill.py imports strands_durable.faults.agents",
    ]


GOLDEN_RUN_MODULE = Path("kit") / "golden.py"


def golden_run_switches(source: str, where: str) -> list[str]:
    """`isinstance(x, ...GoldenRun)` calls in `source` (the subtype decides what the code does)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            names = {n.id for arg in node.args[1:] for n in ast.walk(arg) if isinstance(n, ast.Name)}
            names |= {n.attr for arg in node.args[1:] for n in ast.walk(arg) if isinstance(n, ast.Attribute)}
            if any(name.endswith("GoldenRun") for name in names):
                found.append(f"{where}:{node.lineno}")
    return found


def test_no_code_outside_the_golden_run_module_switches_on_its_subtype():
    found = []
    for path in sorted(FAULTS.rglob("*.py")):
        if path.relative_to(FAULTS) != GOLDEN_RUN_MODULE:
            found += golden_run_switches(path.read_text(), str(path.relative_to(FAULTS)))
    assert found == []


def test_a_switch_on_the_golden_runs_subtype_is_found():
    source = "def rule(golden):\n    return golden.journal if isinstance(golden, kit.WorkflowGoldenRun) else b''\n"
    assert golden_run_switches(source, "kit/judge.py") == ["kit/judge.py:2"]
