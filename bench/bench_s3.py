"""Benchmarks of sessions on S3 against a local SeaweedFS (started here). Prints numbers and ratios from one run.

    python bench/bench_s3.py [--commits 300] [--messages 1000] [--sessions 1000]

1. commit latency: one S3Session.commit of a message vs a bare conditional PutObject (If-None-Match: *) of the same
   bytes on the same client, interleaved (goal: median ratio <= 1.2);
2. opening and loading a session of `--messages` messages: requests and ms;
3. `list` over `--sessions` sessions: requests and ms;
4. a run's commit mix (per round trip: the prompt and the unit's outcome not durable, the answer durable) with
   durable=False commits batched into the next PUT and without: commit PUTs and ms per round trip.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from strands_durable.store.journal import encode_record
from strands_durable.store.layout import new_session_id
from strands_durable.store.s3 import S3Store
from strands_durable.store.s3.client import make_client
from strands_durable.store.s3.local_server import start_server
from strands_durable.store.s3.wrappers import CountingClient


def _meta() -> dict:
    return {"session_id": new_session_id(), "workflow_name": "bench", "pattern": "chain", "created_at": "2026"}


def _message(index: int) -> dict:
    role = "user" if index % 2 == 0 else "assistant"
    text = f"message {index}: " + "lorem ipsum dolor sit amet " * 8
    return {"type": "message", "conv": "agent", "agent": "agent", "unit": "step[0]", "index": index,
            "message": {"role": role, "content": [{"text": text}]}}  # fmt: skip


def bench_commit(client, bucket: str, commits: int) -> None:
    store = S3Store(bucket, "bench-commit", client=client)
    session = store.create(_meta(), b"spec")
    commit_ms, bare_ms = [], []
    for index in range(commits):
        event = _message(index)
        started = time.perf_counter()
        session.commit([event])
        commit_ms.append((time.perf_counter() - started) * 1000)
        data = encode_record({"seq": index, "at": "2026-01-01T00:00:00.000000+00:00", "events": [event]})
        started = time.perf_counter()
        client.put_object(Bucket=bucket, Key=f"bench-bare/{index:012d}", Body=data, IfNoneMatch="*")
        bare_ms.append((time.perf_counter() - started) * 1000)
    session.close()
    commit_median, bare_median = statistics.median(commit_ms), statistics.median(bare_ms)
    print(f"commit latency over {commits} commits (checkpoint every {store.checkpoint_every}):")
    print(f"  S3Session.commit    median {commit_median:6.2f} ms   mean {statistics.fmean(commit_ms):6.2f} ms")
    print(f"  bare conditional PUT median {bare_median:6.2f} ms   mean {statistics.fmean(bare_ms):6.2f} ms")
    mean_ratio = statistics.fmean(commit_ms) / statistics.fmean(bare_ms)
    print(f"  ratio median {commit_median / bare_median:.2f}x   mean {mean_ratio:.2f}x")


def bench_open(client, bucket: str, messages: int) -> None:
    store = S3Store(bucket, "bench-open", client=client)
    session = store.create(_meta(), b"spec")
    session_id = session.state.session_id
    for index in range(messages):
        session.commit([_message(index)])
    session.close()
    counting = CountingClient(client)
    reader = S3Store(bucket, "bench-open", client=counting)
    started = time.perf_counter()
    state = reader.load(session_id)
    load_ms = (time.perf_counter() - started) * 1000
    load_requests = counting.total
    assert len(state.conversations["agent"].messages) == messages
    counting.reset()
    started = time.perf_counter()
    reader.open(session_id).close()
    open_ms = (time.perf_counter() - started) * 1000
    print(f"a {messages}-message session ({state.seq + 1} records):")
    print(f"  load: {load_requests} requests, {load_ms:.1f} ms")
    print(f"  open + close (lease, read, verify, close mark, view, release): {counting.total} requests "
          f"({dict(counting.counts)}), {open_ms:.1f} ms")  # fmt: skip


def bench_list(client, bucket: str, sessions: int) -> None:
    store = S3Store(bucket, "bench-list", client=client)

    def one(_index: int) -> None:
        session = store.create(_meta(), b"spec")
        session.commit([{"type": "status", "status": "paused", "reason": "interrupted"}])
        session.close()

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(sessions)))
    counting = CountingClient(client)
    lister = S3Store(bucket, "bench-list", client=counting)
    started = time.perf_counter()
    summaries = lister.list()
    list_ms = (time.perf_counter() - started) * 1000
    assert len(summaries) == sessions
    print(f"list of {sessions} sessions: {counting.total} requests ({dict(counting.counts)}), {list_ms:.0f} ms")


def bench_batching(client, bucket: str, trips: int) -> None:
    print(f"a run's commit mix, {trips} round trips (prompt and unit outcome durable=False, answer durable):")
    for batch in (False, True):
        counting = CountingClient(client)
        store = S3Store(bucket, f"bench-batch-{batch}", client=counting, batch=batch)
        session = store.create(_meta(), b"spec")
        counting.reset()
        started = time.perf_counter()
        for trip in range(trips):
            session.commit([_message(2 * trip)], durable=False)
            session.commit([_message(2 * trip + 1)])
            unit = {"type": "unit", "unit": f"step[{trip}]", "record": {"status": "completed", "response": "r"}}
            session.commit([unit], durable=False)
        elapsed_ms = (time.perf_counter() - started) * 1000
        puts = counting.counts["put_object"]
        session.close()
        label = "batched  " if batch else "one each "
        print(f"  {label} {puts / trips:5.2f} PUTs and {elapsed_ms / trips:6.2f} ms per round trip ({puts} PUTs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--trips", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        server = start_server(Path(data))
        try:
            client = make_client(server.endpoint, server.access_key, server.secret_key)
            client.create_bucket(Bucket="bench")
            print(f"SeaweedFS at {server.endpoint} (loopback)")
            bench_commit(client, "bench", args.commits)
            bench_open(client, "bench", args.messages)
            bench_list(client, "bench", args.sessions)
            bench_batching(client, "bench", args.trips)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
