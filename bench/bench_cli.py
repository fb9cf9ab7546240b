"""How fast the `strands` command starts, against `python -c pass` measured in the same run.

Targets: `strands --help` <= 0.3 s; `strands sessions list` over 1,000 sessions <= 1 s. Each command runs as a
real child process (the console script of this interpreter's environment) `--runs` times; the median is reported
in seconds and as a ratio to the median of `python -c pass`. The sessions are real: created, committed and
closed through `LocalStore` (a mix of completed, paused and stale running sessions).

    .venv/bin/python bench/bench_cli.py [--sessions 1000] [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from strands_durable.store import LocalStore, layout

TARGETS_S = {"strands --help": 0.3, "strands sessions list": 1.0}


def strands_command() -> list[str]:
    script = Path(sys.executable).with_name("strands")
    return [str(script)] if script.exists() else [sys.executable, "-m", "strands_durable"]


def median_seconds(command: list[str], runs: int, env: dict[str, str]) -> float:
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)  # warm
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def make_sessions(root: Path, count: int) -> str:
    store = LocalStore(root)
    last = ""
    for index in range(count):
        meta = {
            "session_id": layout.new_session_id(),
            "workflow_name": f"bench-{index % 7}",
            "pattern": "chain",
            "spec_path": "/specs/bench.yaml",
            "spec_hash": "0" * 64,
            "variables": {"topic": "benchmarks"},
            "created_at": "2024-01-01T00:00:00+00:00",
            "runtime": {"provider": "synthetic", "seed": 0},
        }
        session = store.create(meta, b"version: 0\n")
        kind = index % 3
        if kind == 2:
            session.abandon()  # running, holder gone: listed as running (stale)
        else:
            status = "completed" if kind == 0 else "paused"
            session.commit([{"type": "status", "status": status, "reason": None if kind == 0 else "interrupted"}])
            session.close()
        last = meta["session_id"]
    return last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "sessions"
        some_id = make_sessions(root, args.sessions)
        env = {**os.environ, "STRANDS_SESSIONS_DIR": str(root)}
        strands = strands_command()
        baseline = median_seconds([sys.executable, "-c", "pass"], args.runs, env)
        rows = [
            ("strands --help", median_seconds([*strands, "--help"], args.runs, env)),
            (
                f"strands sessions list ({args.sessions} sessions)",
                median_seconds([*strands, "sessions", "list"], args.runs, env),
            ),
            ("strands sessions show ID", median_seconds([*strands, "sessions", "show", some_id], args.runs, env)),
        ]

    print(f"python -c pass: {baseline * 1000:.1f} ms (median of {args.runs})")
    print()
    print("| command | median | x python -c pass | target |")
    print("|---|---|---|---|")
    for name, seconds in rows:
        target = next((t for key, t in TARGETS_S.items() if name.startswith(key)), None)
        verdict = "-" if target is None else f"<= {target} s: {'met' if seconds <= target else 'MISSED'}"
        print(f"| `{name}` | {seconds * 1000:.0f} ms | {seconds / baseline:.1f}x | {verdict} |")


if __name__ == "__main__":
    main()
