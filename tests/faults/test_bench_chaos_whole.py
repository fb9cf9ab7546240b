"""The chaos bench's whole-run split (bench/bench_chaos.py `--whole`, `--xdist`): the probe plugin each timed pytest
process loads (bench/xdist_probe.py) counts the CPU of the `schedules` items, of the other items' runs and of the
cyclic collector apart, and the split shows them apart from pytest's own work around the items."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_chaos_under_test", BENCH / "bench_chaos.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_split_shows_the_items_runs_apart_from_the_work_around_them(tmp_path: Path) -> None:
    probe = tmp_path / "probe.jsonl"
    line = {"process": "serial", "first_item_cpu": 1.0, "schedules_cpu": 0.5, "calls_cpu": 2.0}
    line |= {"collector_cpu": 0.25, "unconfigure_cpu": 4.0}
    probe.write_text(json.dumps(line) + "\n")
    bench = _bench()
    split = bench.cpu_split(probe, 4.75)
    assert split == {
        "after unconfigure": 0.75,
        "process to the first item": 1.0,
        "process in items' runs": 2.0,
        "process around items (pytest, plugins' hooks)": 0.5,
        "process in schedules items": 0.5,
        bench.COLLECTOR: 0.25,
    }


def test_the_probe_counts_the_cpu_of_the_schedules_items(tmp_path: Path) -> None:
    (tmp_path / "test_work.py").write_text(
        "import time\n\n"
        "def _spin(seconds):\n"
        "    end = time.process_time() + seconds\n"
        "    while time.process_time() < end:\n"
        "        pass\n\n"
        "def test_point():\n    _spin(0.05)\n\n"
        "def test_garbage():\n"
        "    import gc\n"
        "    cycles = [[] for _ in range(300_000)]\n"
        "    for cycle in cycles:\n"
        "        cycle.append(cycle)\n"
        "    del cycles\n"
        "    gc.collect()\n\n"
        "def schedules():\n    _spin(0.3)\n"
    )
    probe = tmp_path / "probe.jsonl"
    # a serial run of its own: not one of this suite's xdist workers, whose variables the child would inherit
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_XDIST", "PYTEST_CURRENT"))}
    env["PYTHONPATH"] = f"{BENCH}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    options = [
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "-p",
        "xdist_probe",
        "-o",
        "python_functions=test_* schedules",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "test_work.py", "-q", "-n", "0", *options],
        cwd=tmp_path,
        env={**env, "BENCH_XDIST_PROBE": str(probe)},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    (line,) = [json.loads(text) for text in probe.read_text().splitlines()]
    in_items = line["unconfigure_cpu"] - line["first_item_cpu"]
    assert line["process"] == "serial"
    assert line["schedules_cpu"] >= 0.3
    assert in_items - line["schedules_cpu"] >= 0.05  # the other item's CPU is not counted as the schedules item's
    assert 0.05 <= line["calls_cpu"] < 0.3  # the other items' runs, not the schedules item's
    assert line["calls_cpu"] <= in_items - line["schedules_cpu"]
    assert line["collector_cpu"] >= 0.01  # the pass over 300,000 cycles the garbage item set off
