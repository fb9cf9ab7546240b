"""Every byte the project writes goes through the file-operations layer (store/fileops.py), so the chaos
harness can record and fault every write. This test reads the source and fails on a direct write elsewhere."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import strands_durable

PACKAGE = Path(strands_durable.__file__).parent
ALLOWED = {PACKAGE / "store" / "fileops.py"}

WRITE_METHODS = {
    "write_text",
    "write_bytes",
    "mkdir",
    "unlink",
    "rmdir",
    "rename",
    "touch",
    "symlink_to",
    "hardlink_to",
}
OS_WRITES = {
    "write",
    "pwrite",
    "rename",
    "replace",
    "remove",
    "unlink",
    "mkdir",
    "makedirs",
    "rmdir",
    "removedirs",
    "truncate",
    "ftruncate",
    "link",
    "symlink",
    "fsync",
    "fdatasync",
    "sync",
}
WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}


def _to_terminal(call: ast.Call) -> bool:
    """os.write to a descriptor named for a terminal stream (a signal handler's notice), not to a file."""
    target = call.args[0] if call.args else None
    return isinstance(target, ast.Attribute) and target.attr in {"_notice_fd", "stderr_fd"}


def _to_pipe(call: ast.Call) -> bool:
    """os.write to a pipe between processes, named `*_pipe` (the forked chaos workers' tasks and answers)."""
    target = call.args[0] if call.args else None
    name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else ""
    return name.endswith("_pipe")


def _to_devnull(call: ast.Call) -> bool:
    """os.open(os.devnull, ...): where a closed stdout is pointed (cli/output.py), not a file anyone reads."""
    target = call.args[0] if call.args else None
    return isinstance(target, ast.Attribute) and target.attr == "devnull"


SHUTIL_READS = {"which", "disk_usage", "get_terminal_size"}  # shutil functions that write nothing


def _direct_writes(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        where = f"{path.relative_to(root)}:{node.lineno}"
        if isinstance(func, ast.Name) and func.id == "open":
            mode = (
                node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            )
            if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) & set("wax+"):
                found.append(f"{where}: open(..., {mode.value!r})")
        elif isinstance(func, ast.Attribute):
            value = func.value
            owner = (
                value.id if isinstance(value, ast.Name) else value.attr if isinstance(value, ast.Attribute) else None
            )
            if owner == "os" and func.attr == "write" and (_to_terminal(node) or _to_pipe(node)):
                continue
            if owner == "os" and func.attr in OS_WRITES:
                found.append(f"{where}: os.{func.attr}")
            elif owner == "os" and func.attr == "open" and not _to_devnull(node):
                flags = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)} & WRITE_FLAGS
                if flags:
                    found.append(f"{where}: os.open with {sorted(flags)}")
            elif owner == "shutil" and func.attr not in SHUTIL_READS:
                found.append(f"{where}: shutil.{func.attr}")
            elif func.attr in WRITE_METHODS and owner not in {"ops", "_ops", "fileops"}:
                found.append(f"{where}: .{func.attr}()")
    return found


def test_no_module_writes_files_outside_the_file_operations_layer() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path not in ALLOWED:
            offenders += _direct_writes(path)
    assert not offenders, "direct file writes outside store/fileops.py:\n" + "\n".join(offenders)


def test_the_scan_catches_a_direct_write(tmp_path: Path) -> None:
    copy = tmp_path / "strands_durable"  # a copy of the package: the installed one is never written to
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    sample = copy / "_scan_probe.py"
    sample.write_text(
        "import os\nfrom pathlib import Path\nPath('x').write_text('y')\nos.replace('a', 'b')\nopen('f', 'w')\n"
    )
    found = _direct_writes(sample, tmp_path)
    assert found == [
        "strands_durable/_scan_probe.py:3: .write_text()",
        "strands_durable/_scan_probe.py:4: os.replace",
        "strands_durable/_scan_probe.py:5: open(..., 'w')",
    ], found
