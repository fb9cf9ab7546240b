"""The chaos bench (bench/bench_chaos.py) removes every scratch directory it and its child processes create: left
behind in a memory-backed temp directory they piled up run after run (hundreds of `strands-chaos-*` folders)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_chaos.py"


@pytest.mark.long  # a bench's hygiene, 10-40 s of golden runs of two chains: CI's long step, not the README's command
def test_the_chaos_bench_leaves_no_scratch_directory_behind(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "STRANDS_CHAOS_TMPDIR": str(scratch)}
    done = subprocess.run(
        [sys.executable, str(BENCH), "--chains-only", "--points-per-chain", "2"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "cost per crash point, 50 vs 10 steps" in done.stdout
    assert sorted(p.name for p in scratch.iterdir()) == []
