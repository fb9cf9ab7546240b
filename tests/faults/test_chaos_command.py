"""`strands chaos` as a user runs it: a real subprocess with the progress display on, forking kill and
concurrent children, a JSON report, exit 0 only with zero findings; bad flags are one-line usage errors."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
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
    assert "PASS: every fault class ran on every spec; no divergence, no invalid history, no data lost" in result.stdout
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


@pytest.mark.slow
def test_the_soak_ends_within_its_budget_and_never_passes_a_class_that_did_not_run(tmp_path: Path) -> None:
    spec = EXAMPLES / "chain-research.strands.yaml"
    started = time.monotonic()
    result = strands_chaos(str(spec), "--budget", "4s", "--no-progress", "--report", "r.json", cwd=tmp_path)
    elapsed = time.monotonic() - started
    assert elapsed < 4 + 5, f"ran {elapsed:.1f}s on a 4s budget"
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line.split()}
    not_run = [
        fault
        for fault in ("interrupt", "kill", "power", "disk", "concurrent", "stream", "compound", "hostile")
        if "not run" in rows[fault]
    ]
    assert not_run, result.stdout  # eight classes do not all fit in four seconds
    assert "PASS" not in result.stdout
    assert "the budget ran out (raise --budget)" in result.stdout
    assert f"Did not run: {', '.join(f'{fault} on {spec.name}' for fault in not_run)}" in result.stdout
    assert result.returncode == 21
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["not_run"] == not_run and report["passed"] is False and report["verdict"] == "INCOMPLETE"
    assert [pair["fault"] for pair in report["missing_pairs"]] == not_run


FLAGS = ("--faults", "kill,power", "--budget", "5m", "--no-progress", "--report", "r.json")


@pytest.mark.slow
def test_ctrl_c_prints_the_partial_table_writes_the_report_and_removes_the_scratch_directory(tmp_path: Path) -> None:
    scratch_parent = tmp_path / "tmp"
    scratch_parent.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch_parent), "STRANDS_CHAOS_TMPDIR": str(scratch_parent)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "strands_durable", "chaos", str(EXAMPLES / "chain-research.strands.yaml"), *FLAGS],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not any(p.name.startswith("strands-chaos-") for p in scratch_parent.iterdir()):
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    time.sleep(3)  # the golden run, then the first work item's child
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err, err
    assert "Interrupted (Ctrl+C): the table shows what ran before it" in out
    assert any(line.startswith("kill ") for line in out.splitlines()), out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["interrupted"] is True and report["passed"] is False
    assert list(scratch_parent.iterdir()) == [], "the scratch directory was left behind"


@pytest.mark.slow
def test_ctrl_c_after_every_class_ran_on_the_first_spec_is_incomplete_naming_the_second_specs_pairs(
    tmp_path: Path,
) -> None:
    first, second = EXAMPLES / "routing-support-triage.strands.yaml", EXAMPLES / "chain-research.strands.yaml"
    workdir = tmp_path / "work"
    flags = ("--faults", "interrupt,stream", "--budget", "10m", "--no-progress", "--report", "r.json")
    proc = subprocess.Popen(
        [sys.executable, "-m", "strands_durable", "chaos", str(first), str(second), *flags, "--workdir", str(workdir)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while not (workdir / "chain-research" / "golden").exists():  # both classes ran on the first spec
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "PASS" not in out
    assert "INCOMPLETE: interrupted (Ctrl+C); 2 (fault class, spec) pairs of 4 did not run" in out, out
    assert "Did not run: interrupt on chain-research.strands.yaml, stream on chain-research.strands.yaml" in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["interrupted"] is True and report["passed"] is False and report["verdict"] == "INCOMPLETE"
    assert report["missing_pairs"] == [
        {"fault": "interrupt", "spec": str(second)},
        {"fault": "stream", "spec": str(second)},
    ]
    assert report["not_run"] == []  # each class ran on the first spec: the old per-class check saw nothing missing


@pytest.mark.parametrize("command", ["run", "validate", "chaos"])
def test_a_missing_spec_file_is_exit_3_worded_alike_by_run_validate_and_chaos(tmp_path: Path, command: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "strands_durable", command, "nope.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (result.returncode, result.stderr) == (3, "Error: nope.yaml: no such file\n")


def test_the_faults_help_names_every_class_of_the_registry(tmp_path: Path) -> None:
    from strands_durable.faults.classes.registry import FAULT_CLASSES, parse_fault_classes

    result = strands_chaos("--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    shown = result.stdout.split("--faults CLASSES", 1)[1].split("--report", 1)[0]
    words = set(re.split(r"[\s,;()]+", shown))  # the help is wrapped: whole words, never one cut in two
    assert [name for name in FAULT_CLASSES if name not in words] == [], shown
    assert parse_fault_classes("all")[: len(FAULT_CLASSES)] == list(FAULT_CLASSES)  # what `all` runs


def test_python_m_chaos_help_shows_specs_as_optional_defaulting_to_every_example_and_scenario() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "chaos", "--help"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "Usage: python -m chaos [OPTIONS] [SPECS...]" in result.stdout
    assert "required" not in result.stdout
    assert "chaos/scenarios/*.strands.yaml" in " ".join(result.stdout.split())


@pytest.mark.slow
def test_python_m_chaos_without_specs_soaks_the_defaults_even_after_a_json_report_path(tmp_path: Path) -> None:
    from chaos.__main__ import default_specs

    command = [sys.executable, "-m", "chaos", "--budget", "1s", "--no-progress", "--report", str(tmp_path / "r.json")]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 21, result.stdout + result.stderr  # a second is not enough: INCOMPLETE, never PASS
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["specs"] == [str(spec) for spec in default_specs()]
