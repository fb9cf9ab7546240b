"""`strands chaos` as a user runs it: a real subprocess with the progress display on, forking kill and
concurrent children, a JSON report, exit 0 only with zero findings; bad flags are one-line usage errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO


def strands_chaos(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "strands_durable", "chaos", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_a_soak_with_the_progress_display_forks_its_children_and_passes(tmp_path: Path) -> None:
    spec = EXAMPLES / "routing-support-triage.strands.yaml"
    report = tmp_path / "report.json"
    result = strands_chaos(
        str(spec),
        "--faults",
        "kill,concurrent",
        "--rounds",
        "1",
        "--budget",
        "5m",
        "--report",
        str(report),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS: no divergence, no invalid history, no data lost" in result.stdout
    assert "refusing to fork" not in result.stdout + result.stderr
    data = json.loads(report.read_text())
    assert data["passed"] is True and data["faults"] == ["kill", "concurrent"]
    assert data["totals"]["kill"]["crash_points"] > 0 and data["totals"]["concurrent"]["crash_points"] > 0
    assert all(not run["findings"] for run in data["runs"])
    kill_row = next(line for line in result.stdout.splitlines() if line.startswith("kill "))
    assert int(kill_row.split()[1]) > 0, "kill children were forked and explored"


def test_an_unknown_fault_class_is_a_one_line_usage_error(tmp_path: Path) -> None:
    result = strands_chaos(
        str(REPO / "examples" / "chain-research.strands.yaml"), "--faults", "lightning", cwd=tmp_path
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("Error: ")
