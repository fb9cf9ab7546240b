"""Benchmarks of sessions on S3 against a local SeaweedFS (started here). Prints numbers and ratios from one run.

    python bench/bench_s3.py [--commits 300] [--messages 1000] [--sessions 1000]

1. commit latency: one S3Session.commit of a message vs a bare conditional PutObject (If-None-Match: *) of the same
   bytes on the same client, interleaved (goal: median ratio <= 1.2);
2. opening and loading a session of `--messages` messages: requests and ms;
3. `list` over `--sessions` sessions: requests and ms;
4. a run's commit mix (per round trip: the prompt and the unit's outcome not durable, the answer durable) with
   durable=False commits batched into the next PUT and without: commit PUTs and ms per round trip;
5. `--only checkpoint` (not in the default run): one compaction of a session of 1,000 and 10,000 messages
   (`--checkpoint-messages`), in the earlier form (records 0..seq concatenated) and in the current one (the folded
   state), each on its own copy of the session: bytes written and ms; then loading and opening each session.
   Two mixes: messages alone (the live state is the whole history) and tool round trips (a prompt, a toolUse, the
   tool's journaled result, the results message, the answer, the unit's outcome and position).
6. `--only units` (not in the default run): `--writers` unit writers (threads, each its own client) of one
   session commit `--unit-commits` messages each at once (every third durable), after a history of
   `--unit-history` records: commits/s, lost races per commit and GETs per lost race, with a lost race read
   as before (the whole session) and as now (only the commits after the writer's last record), runs paired.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from strands_durable.store.journal import encode_line
from strands_durable.store.layout import new_session_id
from strands_durable.store.s3 import S3Store
from strands_durable.store.s3.client import make_client
from strands_durable.testing.s3_faults import CountingClient
from strands_durable.testing.s3_server import start_server


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
        data = encode_line({"seq": index, "at": "2026-01-01T00:00:00.000000+00:00", "events": [event]}).data
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


class _RaceCounting(S3Store):
    """A store that counts its writers' lost races (each one's catch-up calls `read_after` once); with
    `full_read` a lost race reads the whole session, as every lost race did before `read_after` existed."""

    full_read = False

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lost_races = 0

    def read_after(self, session_id: str, seq: int):
        self.lost_races += 1
        return None if self.full_read else super().read_after(session_id, seq)


class _FullRead(_RaceCounting):
    full_read = True


def bench_units(endpoint: tuple[str, str, str], bucket: str, writers: int, commits: int, history: int) -> None:
    """`writers` unit writers of one session commit at once; the catch-up of a lost race as before and as now,
    paired (before, now, before, now)."""
    setup = S3Store(bucket, "bench-units", client=make_client(*endpoint))
    print(f"{writers} unit writers x {commits} commits (every third durable) after {history} records, threads:")
    results: dict[str, list[tuple[float, float, float]]] = {"full read": [], "short read": []}
    for _pair in range(2):
        for label, kind in (("full read", _FullRead), ("short read", _RaceCounting)):
            session = setup.create(_meta(), b"spec")
            for index in range(history):
                session.commit([_message(index)], durable=index % 16 == 15)
            session.close()
            sid = session.state.session_id
            counters = [CountingClient(make_client(*endpoint)) for _ in range(writers)]
            stores = [kind(bucket, "bench-units", client=counting) for counting in counters]
            opened = [store.open_unit(sid, unit=f"task:w{n}", attempt=1) for n, store in enumerate(stores)]
            for counting in counters:
                counting.reset()

            def write(n: int, opened=opened) -> None:
                for index in range(commits):
                    event = {**_message(index), "conv": f"w{n}", "agent": f"w{n}", "unit": f"task:w{n}"}
                    opened[n].commit([event], durable=index % 3 == 2 or index == commits - 1)

            started = time.perf_counter()
            with ThreadPoolExecutor(writers) as pool:
                list(pool.map(write, range(writers)))
            elapsed = time.perf_counter() - started
            lost = sum(store.lost_races for store in stores)
            gets = sum(counting.counts["get_object"] for counting in counters)
            for unit_session in opened:
                unit_session.close()
            state = setup.load(sid)
            assert all(len(state.conversations[f"w{n}"].messages) == commits for n in range(writers))
            total = writers * commits
            per_race = gets / lost if lost else 0.0
            results[label].append((total / elapsed, lost / total, per_race))
            print(f"  {label:10}: {total / elapsed:6.1f} commits/s, {lost / total:.2f} lost races per commit, "
                  f"{per_race:5.1f} GETs per lost race ({lost} lost races, {elapsed:.2f} s)")  # fmt: skip
    (full_rate, full_lost, full_gets), (short_rate, short_lost, short_gets) = (
        tuple(statistics.median(value[i] for value in results[label]) for i in range(3))
        for label in ("full read", "short read")
    )
    print(f"  medians: commits/s {short_rate / full_rate:.2f}x with the short read; "
          f"lost races per commit {full_lost:.2f} -> {short_lost:.2f}; GETs per lost race "
          f"{full_gets:.1f} -> {short_gets:.1f}")  # fmt: skip


def _round_trip(trip: int) -> list[list[dict]]:
    """The commits of one tool round trip of a chain step (4 messages), each a list of events."""
    text = "lorem ipsum dolor sit amet " * 8
    conv = {"conv": "agent", "agent": "agent", "unit": f"step[{trip}]"}
    use_id = f"tool-{trip}"
    result = {"toolUseId": use_id, "status": "success", "content": [{"text": f"result {trip}: " + text * 2}]}
    messages = [
        {"role": "user", "content": [{"text": f"step {trip}: {text}"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": use_id, "name": "lookup", "input": {"q": text}}}]},
        {"role": "user", "content": [{"toolResult": result}]},
        {"role": "assistant", "content": [{"text": f"answer {trip}: {text}"}]},
    ]
    events = [[{"type": "message", **conv, "index": 4 * trip + i, "message": m}] for i, m in enumerate(messages)]
    events.insert(2, [{"type": "tool_result", "conv": "agent", "result": result}])
    outcome = {"type": "unit", "unit": f"step[{trip}]", "record": {"status": "completed", "response": text}}
    position = {"type": "pattern_state", "state": {"current_step": trip + 1, "last_response": f"answer {trip}"}}
    return [*events, [outcome, position]]


def _long_session(client, bucket: str, prefix: str, messages: int, mix: str) -> tuple[S3Store, str, object]:
    """A session of `messages` messages that has never compacted (one PUT per 16 records: durable=False commits
    ride with the next one)."""
    store = S3Store(bucket, prefix, client=client, checkpoint_every=10**9)
    session = store.create(_meta(), b"spec")
    if mix == "messages":
        commits = [[_message(index)] for index in range(messages)]
    else:
        commits = [events for trip in range(messages // 4) for events in _round_trip(trip)]
    for index, events in enumerate(commits):
        session.commit(events, durable=index % 16 == 15 or index == len(commits) - 1)
    return store, session.state.session_id, session


def _checkpoint_size(store: S3Store, session_id: str) -> int:
    (listed,) = store.objects.list(store.keys.checkpoints(session_id))
    return listed.size


def _earlier_form_compaction(store: S3Store, session, previous: int) -> int:
    """What a compaction did before checkpoints held the folded state: PUT records 0..seq concatenated, then
    delete the commits it covers and the previous checkpoint (this session never compacts itself, so the writer
    still holds every record). Returns the new checkpoint's seq. The lease is renewed first, as both forms do."""
    session._lease.renew()
    sid, upto = session.state.session_id, session.state.seq
    store.objects.put_new(store.keys.checkpoint(sid, upto), b"".join(session._records))
    doomed = [store.keys.commit(sid, seq) for seq in range(previous + 1, upto + 1)]
    store.objects.delete_many(doomed + ([store.keys.checkpoint(sid, previous)] if previous >= 0 else []))
    return upto


def bench_checkpoint(client, bucket: str, sizes: list[int], rounds: int = 7) -> None:
    """Per size, one copy of the session per form, compacted once; then `rounds` times: 64 more records on each
    (4 PUTs: held records ride with every 16th) and a compaction of each, the two forms interleaved so that the
    machine's load falls on both alike; then each is loaded 3 times and opened and closed 3 times. Medians."""
    forms = ("earlier", "current")
    print(f"a compaction of a long session after 64 more records, median of {rounds}, earlier form vs current:")
    for mix in ("messages", "tool round trips"):
        for messages in sizes:
            built = {form: _long_session(client, bucket, f"bench-ckpt-{form}", messages, mix) for form in forms}
            previous = _earlier_form_compaction(built["earlier"][0], built["earlier"][2], -1)
            built["current"][2].compact()
            timings: dict[str, list[float]] = {form: [] for form in forms}
            for round_ in range(rounds):
                for form in forms:
                    store, _sid, session = built[form]
                    for index in range(64):
                        event = {"type": "attempt", "unit": f"step[{round_}]", "conv": "agent", "attempt": index,
                                 "error": "timeout", "wait_s": 0}  # fmt: skip
                        session.commit([event], durable=index % 16 == 15)
                    started = time.perf_counter()
                    if form == "earlier":
                        previous = _earlier_form_compaction(store, session, previous)
                    else:
                        session.compact()
                    timings[form].append((time.perf_counter() - started) * 1000)
            results = {}
            loads: dict[str, list[float]] = {form: [] for form in forms}
            opens: dict[str, list[float]] = {form: [] for form in forms}
            for form in forms:
                built[form][2].abandon()
            for _ in range(3):
                for form in forms:
                    reader = S3Store(bucket, f"bench-ckpt-{form}", client=client)
                    started = time.perf_counter()
                    state = reader.load(built[form][1])
                    loads[form].append((time.perf_counter() - started) * 1000)
                    assert len(state.conversations["agent"].messages) == messages
                    started = time.perf_counter()
                    reader.open(built[form][1]).close()
                    opens[form].append((time.perf_counter() - started) * 1000)
            for form in forms:
                store, sid, _session = built[form]
                size = _checkpoint_size(store, sid)
                compact_ms, load_ms, open_ms = (statistics.median(t[form]) for t in (timings, loads, opens))
                results[form] = (size, compact_ms, load_ms)
                print(f"  {mix}, {messages} messages, {form:8} form: checkpoint {size / 1024:6.0f} KiB, "
                      f"compaction {compact_ms:6.1f} ms; load {load_ms:6.1f} ms; "
                      f"open + close {open_ms:6.1f} ms")  # fmt: skip
            (old_size, old_ms, old_load), (new_size, new_ms, new_load) = results["earlier"], results["current"]
            print(f"    current/earlier: bytes {new_size / old_size:.2f}x, compaction ms {new_ms / old_ms:.2f}x, "
                  f"load ms {new_load / old_load:.2f}x")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--trips", type=int, default=100)
    parser.add_argument("--checkpoint-messages", default="1000,10000", help="session sizes for --only checkpoint")
    parser.add_argument("--writers", type=int, default=3, help="unit writers for --only units")
    parser.add_argument("--unit-commits", type=int, default=60, help="commits per unit writer for --only units")
    parser.add_argument("--unit-history", type=int, default=200, help="records before the units, --only units")
    sections = ("commit", "open", "list", "batching", "checkpoint", "units")
    parser.add_argument("--only", choices=sections, help="run one section (checkpoint, units run only this way)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        server = start_server(Path(data))
        try:
            client = make_client(server.endpoint, server.access_key, server.secret_key)
            client.create_bucket(Bucket="bench")
            print(f"SeaweedFS at {server.endpoint} (loopback)")
            runs = {
                "commit": lambda: bench_commit(client, "bench", args.commits),
                "open": lambda: bench_open(client, "bench", args.messages),
                "list": lambda: bench_list(client, "bench", args.sessions),
                "batching": lambda: bench_batching(client, "bench", args.trips),
                "checkpoint": lambda: bench_checkpoint(
                    client, "bench", [int(n) for n in args.checkpoint_messages.split(",")]
                ),
                "units": lambda: bench_units(
                    (server.endpoint, server.access_key, server.secret_key),
                    "bench",
                    args.writers,
                    args.unit_commits,
                    args.unit_history,
                ),
            }
            for name in [args.only] if args.only else [n for n in sections if n not in ("checkpoint", "units")]:
                runs[name]()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
