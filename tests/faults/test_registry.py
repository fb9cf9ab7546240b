"""The fault classes are a registry: each module declares its FaultClass (name, bounds, explorer); a class this
package ships is one module plus one line in the registry's BUILT_IN, and another package adds one through the
entry-point group `strands_durable.fault_classes`, which the plugin and the CLI then run like any other."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from strands_durable.errors import UsageError
from strands_durable.faults.classes import registry as real
from tests.conftest import EXAMPLES


def test_every_registered_class_declares_itself_under_its_name() -> None:
    assert real.FAULT_CLASSES == ("interrupt", "kill", "power", "disk", "concurrent", "stream", "compound", "hostile")
    for name in real.FAULT_CLASSES:
        declared = real.fault_class(name)
        assert declared.name == name
        assert set(declared.bounds) == set(real.LEVELS)


REGISTRY = "from strands_durable.faults.classes import registry"
TOY_PACKAGE = """
from strands_durable.faults.kit.findings import FaultClass, FaultRun


def explore_toy(target, workdir, *, golden, depth):
    run = FaultRun("toy", target.name)
    run.explored = depth
    run.outcomes[f"golden points {len(golden.points)}"] += 1
    return run


FAULT_CLASS = FaultClass("toy", {"gate": {"depth": 2}, "full": {"depth": 9}}, explore_toy)
"""


def _install_toy_package(site: Path) -> None:
    """A package `toyfaults` that adds the class `toy` through the entry-point group, as pip would install it:
    the module and its dist-info (METADATA and entry_points.txt) on a directory of the import path."""
    (site / "toyfaults").mkdir(parents=True)
    (site / "toyfaults" / "__init__.py").write_text(TOY_PACKAGE)
    info = site / "toyfaults-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyfaults\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{real.ENTRY_POINT_GROUP}]\ntoy = toyfaults:FAULT_CLASS\n")


def _python(site: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)


def test_another_package_adds_a_class_through_the_entry_point_group(tmp_path: Path) -> None:
    _install_toy_package(tmp_path / "site")
    listed = _python(tmp_path / "site", f"{REGISTRY}; print(registry.fault_class_names())")
    assert listed.stdout.strip() == str((*real.FAULT_CLASSES, "toy")), listed.stderr
    report = tmp_path / "report.json"
    shutil.copy(EXAMPLES / "chain-research.strands.yaml", tmp_path)
    command = [sys.executable, "-m", "pytest", "--strands-chaos", "--strands-chaos-faults=interrupt,toy", "."]
    command += ["--strands-chaos-max-points=1", "--strands-chaos-schedules=0", f"--strands-chaos-report={report}"]
    command += ["-p", "no:cacheprovider", "-p", "no:randomly", "-n", "0", "-q", "-rA"]
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    gate = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert gate.returncode == 0, gate.stdout[-3000:]
    assert "PASSED chain-research.strands.yaml::fault:toy" in gate.stdout
    toy = next(item for item in json.loads(report.read_text())["items"] if item.get("fault") == "toy")
    assert toy["explored"] == 2  # its gate bounds, from the class the other package declared


def test_an_entry_point_that_names_no_fault_class_is_a_usage_error(tmp_path: Path) -> None:
    _install_toy_package(tmp_path / "site")
    entry_points = tmp_path / "site" / "toyfaults-0.1.dist-info" / "entry_points.txt"
    entry_points.write_text(f"[{real.ENTRY_POINT_GROUP}]\ntoy = toyfaults:explore_toy\n")
    done = _python(tmp_path / "site", f"{REGISTRY}; registry.fault_class('toy')")
    wanted = f"UsageError: fault class 'toy': the {real.ENTRY_POINT_GROUP} entry point toyfaults:explore_toy is not"
    assert wanted in done.stderr


def test_an_unknown_class_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown fault class 'lightning'"):
        real.fault_class("lightning")
