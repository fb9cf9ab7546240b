"""The package root is the public API: lazy (importing it loads no strands-agents), complete, and the import paths
README documented before it keep working for one release with a DeprecationWarning."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

import strands_durable

PUBLIC = {
    "run_workflow",
    "resume",
    "load_session",
    "RunOptions",
    "non_idempotent",
    "tool_workspace",
    "CrashPoints",
    "InjectedCrash",
    "LocalStore",
    "MemoryStore",
    "S3Store",
    "DurableSessionManager",
}


def test_the_root_exports_the_public_names_and_nothing_is_missing() -> None:
    assert set(strands_durable.__all__) == PUBLIC | {"__version__"}
    for name in PUBLIC:
        assert getattr(strands_durable, name).__name__ == name
    with pytest.raises(AttributeError):
        strands_durable.RunContext  # noqa: B018  (internal: not exported)


def test_importing_the_package_does_not_import_strands_agents() -> None:
    code = (
        "import sys, strands_durable\n"
        "from strands_durable import RunOptions, CrashPoints, LocalStore\n"
        "print(sorted(m for m in sys.modules if m == 'strands' or m.startswith('strands.')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]", result.stdout


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("strands_durable.runner.api", "run_workflow"),
        ("strands_durable.runner.api", "resume"),
        ("strands_durable.runner.api", "load_session"),
        ("strands_durable.runner.context", "RunOptions"),
        ("strands_durable.runner.tools", "non_idempotent"),
    ],
)
def test_the_import_paths_readme_documented_still_work_with_a_deprecation_warning(module: str, name: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(importlib.import_module(module), name)
    assert value is getattr(strands_durable, name)
    (warning,) = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert f"{module}.{name} is deprecated" in str(warning.message)
    assert "import it from strands_durable" in str(warning.message)
    assert warning.filename == __file__  # it points at the caller, not at the shim


def test_the_package_ships_its_type_information() -> None:
    from pathlib import Path

    assert (Path(strands_durable.__file__).parent / "py.typed").is_file()
