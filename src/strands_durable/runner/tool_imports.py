"""Import the tools a spec names by module: `module:function`, dotted `module.function`, or a module of tools.

Modules are looked up on the Python path, then in the spec's directory (added at the end of `sys.path` the first
time a spec needs it, so a tool module beside the spec imports from any working directory and never shadows an
installed package). A tool that cannot be found or imported is `Unsupported` (exit 18) naming the tool, the
underlying error and where modules were looked up.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from strands_durable.errors import Unsupported
from strands_durable.runner import marks
from strands_durable.runner.marks import IDEMPOTENT_ATTRIBUTE


def _candidates(ref: str) -> list[tuple[str, str | None]]:
    """(module, attribute) readings of a reference, the likeliest first; attribute None: the module itself."""
    if ":" in ref:
        module_name, _, attr = ref.partition(":")
        return [(module_name, attr)]
    readings: list[tuple[str, str | None]] = [(ref, None)]
    if "." in ref:
        module_name, _, attr = ref.rpartition(".")
        readings.insert(0, (module_name, attr))
    return readings


def search_path(spec_dir: Path | None) -> None:
    """Put the spec's directory at the end of the module search path (once)."""
    if spec_dir is not None and str(spec_dir) not in sys.path:
        sys.path.append(str(spec_dir))
        importlib.invalidate_caches()


def _no_module(ref: str) -> str:
    return "no module named " + " or ".join(f"'{module_name}'" for module_name, _attr in _candidates(ref))


def _where_looked(spec_dir: Path | None) -> str:
    beside = f" and in the spec's directory {spec_dir}" if spec_dir is not None else ""
    return f"modules are looked up on the Python path{beside}"


def _failure(ref: str, where: str, reason: str, spec_dir: Path | None) -> Unsupported:
    return Unsupported(f"tool '{ref}' ({where}) cannot be imported: {reason} ({_where_looked(spec_dir)})")


def _module_file(module_name: str) -> str:
    try:
        found = importlib.util.find_spec(module_name)
    except Exception:  # a parent package that fails to import: the caller reports that error
        return ""
    origin = getattr(found, "origin", None)
    return f" ({origin})" if origin and origin not in ("built-in", "frozen") else ""


def check_findable(ref: str, where: str, spec_dir: Path | None) -> None:
    """Raise Unsupported unless the module of `ref` can be found (nothing of it runs, but its parent packages)."""
    search_path(spec_dir)
    first_error: str | None = None
    for module_name, _attr in _candidates(ref):
        try:
            if importlib.util.find_spec(module_name) is not None:
                return
        except Exception as exc:  # a parent package's own import failed, or a name that is not a module path
            first_error = first_error or f"importing {module_name} raised {type(exc).__name__}: {exc}"
    raise _failure(ref, where, first_error or _no_module(ref), spec_dir)


def import_tool(ref: str, where: str, spec_dir: Path | None) -> Any:
    """The tool `ref` names: the function (as a Strands tool), the tool object, or the module of tools. A failure
    is chained to the module's own error (`--debug` shows its traceback)."""
    search_path(spec_dir)
    failures: list[tuple[str, BaseException | None]] = []
    for module_name, attr in _candidates(ref):
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # the module's own error (a missing dependency, a syntax error) is the answer
            missing = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
            if missing is not None and (module_name + ".").startswith(missing + "."):
                continue  # this reading of the reference names no module
            failures.append(
                (f"importing {module_name}{_module_file(module_name)} raised {type(exc).__name__}: {exc}", exc)
            )
            continue
        if attr is None:
            return module
        obj = getattr(module, attr, None)
        if obj is not None:
            return _as_tool(obj)
        try:
            return importlib.import_module(f"{module_name}.{attr}")
        except ImportError:
            failures.append((f"module '{module_name}'{_module_file(module_name)} has no attribute '{attr}'", None))
    reason, cause = failures[0] if failures else (_no_module(ref), None)
    raise _failure(ref, where, reason, spec_dir) from cause


def _as_tool(obj: Any) -> Any:
    if hasattr(obj, "tool_name") or hasattr(obj, "TOOL_SPEC"):
        return obj
    if callable(obj):
        from strands import tool

        wrapped = tool(obj)
        if getattr(obj, IDEMPOTENT_ATTRIBUTE, True) is False:
            marks.non_idempotent(wrapped)
        return wrapped
    return obj


__all__ = ["check_findable", "import_tool", "search_path"]
