"""Benchmark of plain-Python agent sessions (issue 14): DurableSessionManager vs the SDK's FileSessionManager and
SnapshotSessionManager(save_latest_on="message"), and no session manager at all. Prints numbers measured in one run.

    python bench/bench_sdk_sessions.py [--repeat 5] [--turns 50]

One invocation of 50 tool turns (a prompt, 50 toolUse messages, 50 results, an answer: 102 messages) on a
zero-latency scripted model through a real Agent:
1. in process: ms per invocation and per message for each manager (median of --repeat runs, each in a fresh
   directory; imports and the first run excluded);
2. whole process: a child process per manager (python start, imports, the invocation, exit), median wall time,
   and the ratios ours / FileSessionManager and ours / SnapshotSessionManager measured in this same run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MANAGERS = ("none", "durable", "file", "snapshot")


def script(turns: int) -> list[Any]:
    return [[{"name": "note", "input": {"n": i}}] for i in range(turns)] + ["done"]


def build(manager: str, directory: Path, turns: int) -> Any:
    from strands import Agent, tool

    from strands_durable.models.scripted import ScriptedModel

    @tool
    def note(n: int) -> str:
        """Note a number."""
        return f"noted {n}"

    session_manager: Any = None
    if manager == "durable":
        from strands_durable import DurableSessionManager

        session_manager = DurableSessionManager("bench", directory)
    elif manager == "file":
        from strands.session.file_session_manager import FileSessionManager

        session_manager = FileSessionManager("bench", storage_dir=str(directory))
    elif manager == "snapshot":
        from strands.session import SnapshotSessionManager
        from strands.storage.local_file_storage import LocalFileStorage

        session_manager = SnapshotSessionManager(
            "bench", storage=LocalFileStorage(str(directory)), save_latest_on="message"
        )
    return Agent(
        model=ScriptedModel(script(turns)), tools=[note], callback_handler=None, session_manager=session_manager
    )


def run_once(manager: str, turns: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        agent = build(manager, Path(tmp), turns)
        start = time.perf_counter()
        result = agent("Note the numbers.")
        elapsed = time.perf_counter() - start
        assert str(result).strip() == "done"
        return elapsed


def child(manager: str, turns: int) -> None:
    run_once(manager, turns)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--child", choices=MANAGERS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.turns)
        return
    messages = 2 * args.turns + 2
    print(f"one invocation, {args.turns} tool turns ({messages} messages), zero-latency model, repeat {args.repeat}")
    inproc: dict[str, float] = {}
    for manager in MANAGERS:
        run_once(manager, args.turns)  # warm-up
    for manager in MANAGERS:
        inproc[manager] = statistics.median(run_once(manager, args.turns) for _ in range(args.repeat))
    for manager in MANAGERS:
        print(
            f"in process   {manager:9s} {inproc[manager] * 1000:8.1f} ms  "
            f"{inproc[manager] * 1000 / messages:6.2f} ms/message"
        )
    whole: dict[str, float] = {}
    for manager in MANAGERS:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            command = [sys.executable, __file__, "--child", manager, "--turns", str(args.turns)]
            subprocess.run(command, check=True)
            times.append(time.perf_counter() - start)
        whole[manager] = statistics.median(times)
        print(f"whole process {manager:9s} {whole[manager] * 1000:8.1f} ms")
    print(
        f"ratio whole process: durable / file {whole['durable'] / whole['file']:.2f}, "
        f"durable / snapshot(message) {whole['durable'] / whole['snapshot']:.2f}"
    )
    print(
        f"ratio in process: durable / file {inproc['durable'] / inproc['file']:.2f}, "
        f"durable / snapshot(message) {inproc['durable'] / inproc['snapshot']:.2f}, "
        f"durable / none {inproc['durable'] / inproc['none']:.2f}"
    )


if __name__ == "__main__":
    main()
