"""The fault kit has one store seam: only `faults/kit/stores.py` names a store implementation; every other module
of the kit, its classes and its agents asks the store it is given (`SessionStore.replayable`). The test doubles of
S3 live in `strands_durable.testing`, not in the product's store package."""

from __future__ import annotations

import ast
from pathlib import Path

import strands_durable.store as store_package

FAULTS = Path(__file__).resolve().parents[2] / "src" / "strands_durable" / "faults"
STORE_S3 = Path(store_package.__file__).parent / "s3"
SEAM = FAULTS / "kit" / "stores.py"
IMPLEMENTATIONS = frozenset({"LocalStore", "LocalSession", "MemoryStore", "S3Store", "S3Session"})
IMPLEMENTATION_MODULES = ("strands_durable.store.local", "strands_durable.store.memory", "strands_durable.store.s3")


def names_an_implementation(source: str, where: str) -> list[str]:
    """Every import in `source` of a store implementation (by name, or its module)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("strands_durable"):
            module = node.module or ""
            if module.startswith(IMPLEMENTATION_MODULES):
                found.append(f"{where}:{node.lineno}: from {module}")
            found += [f"{where}:{node.lineno}: {a.name}" for a in node.names if a.name in IMPLEMENTATIONS]
        elif isinstance(node, ast.Import):
            found += [
                f"{where}:{node.lineno}: {a.name}" for a in node.names if a.name.startswith(IMPLEMENTATION_MODULES)
            ]
    return found


def test_only_the_kits_store_module_names_a_store_implementation() -> None:
    found = []
    for path in sorted(FAULTS.rglob("*.py")):
        if path != SEAM:
            found += names_an_implementation(path.read_text(), str(path.relative_to(FAULTS)))
    assert found == []
    assert names_an_implementation(SEAM.read_text(), "kit/stores.py")  # the seam itself does name them
    assert names_an_implementation("from strands_durable.store import LocalStore\n", "x.py") == ["x.py:1: LocalStore"]


def test_the_kit_accelerator_and_the_local_session_are_not_public_store_names() -> None:
    assert "KnownJournal" not in store_package.__all__ and "LocalSession" not in store_package.__all__
    from strands_durable.store.base import KnownJournal  # part of the replayable seam of the interface

    assert KnownJournal.__module__ == "strands_durable.store.base"


def test_s3_test_doubles_live_in_testing_not_in_the_store_package() -> None:
    from strands_durable.testing import s3_faults, s3_server

    assert hasattr(s3_faults, "CountingClient") and hasattr(s3_server, "LocalS3Server")
    assert not (STORE_S3 / "wrappers.py").exists()
    defined = {
        node.name
        for path in STORE_S3.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.ClassDef, ast.FunctionDef))
    }
    assert not defined & {"CountingClient", "FaultingClient", "LocalS3Server", "start_server"}


def test_the_sessions_option_takes_an_s3_url_and_the_classes_that_run_on_s3() -> None:
    import pytest

    from strands_durable.faults.suite import ChaosSettings, ChaosUsageError

    settings = ChaosSettings(faults=["interrupt", "kill", "concurrent"], sessions="s3://chaos-bucket/ci")
    assert settings.sessions == "s3://chaos-bucket/ci"
    with pytest.raises(ChaosUsageError, match="'power' faults local files"):
        ChaosSettings(faults=["interrupt", "power"], sessions="s3://chaos-bucket/ci")
    with pytest.raises(ChaosUsageError, match="is not s3://BUCKET/PREFIX"):
        ChaosSettings(sessions="sessions-dir")
    with pytest.raises(ChaosUsageError, match="bucket name"):
        ChaosSettings(sessions="s3://NO/prefix")
