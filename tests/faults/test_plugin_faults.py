"""The pytest plugin runs the real-fault classes: `--strands-chaos-faults=interrupt,power,concurrent` adds one
item per class to each spec, counted in the summary line; a class that finds something fails its item."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES

SUMMARY = re.compile(r"^strands-chaos: (\d+) crash points explored in 1 workflows .*, 0 divergences, 0 invalid", re.M)


@pytest.mark.slow
def test_the_plugin_runs_real_fault_classes_as_items(tmp_path: Path) -> None:
    spec = tmp_path / "research.strands.yaml"
    spec.write_text((EXAMPLES / "chain-research.strands.yaml").read_text())
    report = tmp_path / "report.json"
    args = ["--strands-chaos", "--strands-chaos-faults=interrupt,power,concurrent", "--strands-chaos-max-points=2"]
    args += ["--strands-chaos-schedules=0", f"--strands-chaos-report={report}", "-p", "no:cacheprovider", "-v"]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *args, str(spec)], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "research.strands.yaml::fault:power PASSED" in result.stdout
    assert "research.strands.yaml::fault:concurrent PASSED" in result.stdout
    found = SUMMARY.search(result.stdout)
    assert found and int(found.group(1)) > 100, result.stdout[-1500:]  # 2 interrupt points + every power state


def test_unknown_fault_classes_are_refused_by_the_plugin(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--strands-chaos", "--strands-chaos-faults=interrupt,lightning"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 4 and "unknown fault class 'lightning'" in result.stderr
