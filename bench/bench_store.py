"""Benchmarks of the durable store (issue: durable core). Prints absolute numbers and ratios measured in one run.

    python bench/bench_store.py [--repeat 5]

1. a 50-step chain with 100 tool calls on a zero-latency scripted model through real Agents: local file store
   vs the same runner with the in-memory store (target ratio <= 1.15);
2. the cost of one message commit in a session holding 1,000 messages vs 10 (target ratio <= 1.2);
3. loading a 1,000-message session: `load` (journal fold) and `open` (lease, recovery, verification of the
   readable files and histories), without constructing any Agent (target <= 50 ms);
4. opening a long session, 10,000 messages of ~1 KB (issue 18 item 3): `open` with journal checkpoints (the
   default) and with them turned off, and the journal's size (target <= 100 ms).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from strands_durable.runner.options import RunOptions
from strands_durable.runner.run import run_workflow
from strands_durable.store import LocalStore, MemoryStore
from strands_durable.store.fileops import FileOps
from strands_durable.store.layout import new_session_id
from strands_durable.testing.chain import chain_spec_text


class CountingFileOps(FileOps):
    """Counts the fsyncs the store makes (file fsyncs, journal fdatasyncs, directory fsyncs, sync_all)."""

    def __init__(self) -> None:
        self.fsyncs = 0

    def write_file(self, path, data, *, sync):
        self.fsyncs += bool(sync)
        return super().write_file(path, data, sync=sync)

    def fsync_dir(self, path):
        self.fsyncs += 1
        return super().fsync_dir(path)

    def sync_all(self):
        self.fsyncs += 1
        return super().sync_all()

    def open_append(self, path):
        handle = super().open_append(path)
        counter = self

        class Counted:
            def append(self, data):
                handle.append(data)

            def sync(self):
                counter.fsyncs += 1
                handle.sync()

            def close(self):
                handle.close()

        return Counted()


class NoSyncFileOps(CountingFileOps):
    """The same operations with every fsync skipped: only to show how much of the file store's cost is the
    disk's fsync latency (never a configuration the product offers)."""

    def write_file(self, path, data, *, sync):
        return super().write_file(path, data, sync=False)

    def fsync_dir(self, path):
        self.fsyncs += 1

    def sync_all(self):
        self.fsyncs += 1

    def open_append(self, path):
        handle = FileOps.open_append(self, path)

        class Unsynced:
            def append(self, data):
                handle.append(data)

            def sync(self):
                pass

            def close(self):
                handle.close()

        return Unsynced()


def filesystem_type(path: Path) -> str:
    try:
        out = subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def chain_spec(directory: Path, steps: int) -> Path:
    path = directory / "bench.strands.yaml"
    path.write_text(chain_spec_text(steps))
    return path


def chain_script(steps: int) -> dict:
    """One agent per step (no sliding-window trimming): two tool calls, then an answer."""
    return {
        f"worker{i}": [
            {
                "tool_calls": [
                    {"name": "calculator", "input": {"expression": f"{i} + 1"}},
                    {"name": "calculator", "input": {"expression": f"{i} * 2"}},
                ]
            },
            f"Step {i} done.",
        ]
        for i in range(steps)
    }


def time_chain(spec: Path, store_factory, steps: int, out: Path) -> float:
    options = RunOptions(provider="scripted", scripts=chain_script(steps), out_dir=out, validate_requests=True)
    start = time.perf_counter()
    outcome = run_workflow(spec, options, store=store_factory())
    elapsed = time.perf_counter() - start
    assert outcome.status == "completed"
    return elapsed


def bench_chain(root: Path, repeat: int) -> None:
    spec = chain_spec(root, 50)
    counting = CountingFileOps()
    time_chain(spec, MemoryStore, 50, root / "out")  # warm imports and caches
    time_chain(spec, lambda: LocalStore(root / "warm", fileops=counting), 50, root / "out")
    counting.fsyncs = 0
    file_times, memory_times, unsynced_times = [], [], []
    for i in range(repeat):
        memory_times.append(time_chain(spec, MemoryStore, 50, root / "out"))
        file_times.append(time_chain(spec, lambda i=i: LocalStore(root / f"s{i}", fileops=counting), 50, root / "out"))
        unsynced_times.append(
            time_chain(spec, lambda i=i: LocalStore(root / f"u{i}", fileops=NoSyncFileOps()), 50, root / "out")
        )
    best_file, best_memory, best_unsynced = min(file_times), min(memory_times), min(unsynced_times)
    print(
        f"50-step chain, 100 tool calls: memory store {best_memory * 1000:.1f} ms, file store {best_file * 1000:.1f} ms"
    )
    print(f"  fsyncs per run: {counting.fsyncs // repeat}")
    print(f"  ratio file/memory (best of {repeat}): {best_file / best_memory:.3f}  (target <= 1.15)")
    print(f"  ratio file/memory (median): {statistics.median(file_times) / statistics.median(memory_times):.3f}")
    print(
        f"  where it goes: the file store with every fsync skipped takes {best_unsynced * 1000:.1f} ms, ratio "
        f"{best_unsynced / best_memory:.3f}; the fsyncs are {(best_file - best_unsynced) * 1000:.1f} ms, "
        f"{(best_file - best_unsynced) / max(1, counting.fsyncs // repeat) * 1e6:.0f} us each"
    )


def _message(index: int, words: int = 20) -> dict:
    role = "user" if index % 2 == 0 else "assistant"
    message = {"role": role, "content": [{"text": f"message {index} " + "lorem ipsum " * words}]}
    if role == "assistant":
        message["metadata"] = {"usage": {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120}}
    return message


def session_with(store: LocalStore, count: int, *, words: int = 20, durable: bool = True):
    session = store.create({"session_id": new_session_id(), "workflow_name": "b", "pattern": "chain"}, b"")
    for index in range(count):
        message = _message(index, words)
        session.commit(
            [{"type": "message", "conv": "w", "agent": "w", "unit": "u", "index": index, "message": message}],
            durable=durable,
        )
    return session


def time_commits(session, commits: int) -> float:
    start_index = len(session.state.conversations["w"].messages)
    start = time.perf_counter()
    for offset in range(commits):
        index = start_index + offset
        session.commit(
            [{"type": "message", "conv": "w", "agent": "w", "unit": "u", "index": index, "message": _message(index)}]
        )
    return (time.perf_counter() - start) / commits


def bench_commit_cost(root: Path, repeat: int) -> None:
    store = LocalStore(root / "commit")
    small, large = session_with(store, 10), session_with(store, 1000)
    small_costs, large_costs = [], []
    for _ in range(repeat):
        small_costs.append(time_commits(small, 200))
        large_costs.append(time_commits(large, 200))
    small.close()
    large.close()
    s, lg = min(small_costs), min(large_costs)
    print(f"commit cost: {s * 1e6:.0f} us at 10 messages, {lg * 1e6:.0f} us at 1,000 messages")
    print(f"  ratio 1,000/10: {lg / s:.3f}  (target <= 1.2)")


def bench_load(root: Path, repeat: int) -> None:
    store = LocalStore(root / "load")
    session = session_with(store, 1000)
    session_id = session.state.session_id
    session.close()
    loads, opens = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        store.load(session_id)
        loads.append(time.perf_counter() - start)
        start = time.perf_counter()
        opened = store.open(session_id)
        opens.append(time.perf_counter() - start)
        opened.close()
    print(
        f"loading a 1,000-message session: load {min(loads) * 1000:.1f} ms, open (verified) {min(opens) * 1000:.1f} ms"
        "  (target <= 50 ms)"
    )


def bench_long_session(root: Path, repeat: int) -> None:
    """10,000 messages of ~1 KB (84 x "lorem ipsum "), committed and closed, then opened: with checkpoints and
    with them turned off (a threshold no journal reaches). Wall and CPU time of `open`, best of `repeat`."""
    results = {}
    stores = [("default", LocalStore(root / "long"))]
    with contextlib.suppress(TypeError):  # code from before checkpoints (PYTHONPATH at an older src, to compare)
        stores.append(("no checkpoints", LocalStore(root / "long-kept", checkpoint_min_bytes=1 << 62)))
    for name, store in stores:
        session = session_with(store, 10_000, words=84, durable=False)  # durability is not what is measured here
        session_id = session.state.session_id
        session.close()
        walls, cpus = [], []
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            opened = store.open(session_id)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            opened.abandon()  # leaves the journal as it was (no closing record): each open reads the same bytes
        size = store.journal_path(session_id).stat().st_size
        results[name] = (min(walls), min(cpus), size)
    print(f"opening a 10,000-message session (~1 KB each; lease, journal, files, histories), best of {repeat}")
    for name, (wall, cpu, size) in results.items():
        print(f"  {name:15} {wall * 1000:6.1f} ms wall, {cpu * 1000:6.1f} ms CPU; journal {size / 1e6:.1f} MB")
    print("  (target <= 100 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=["chain", "commit", "load", "long"], help="run one of the benchmarks")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        root = Path(tmp)
        print(f"filesystem: {filesystem_type(root)} ({root})")
        benches = {"chain": bench_chain, "commit": bench_commit_cost, "load": bench_load, "long": bench_long_session}
        for name, bench in benches.items():
            if args.only in (None, name):
                bench(root, args.repeat)


if __name__ == "__main__":
    main()
