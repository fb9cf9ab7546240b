"""S3 requests per session operation (create, commit, close, resolve, open to resume, load), counted on the client,
for this tree and, with `--baseline REV`, for the source of git revision REV in the same run (a child process on
the same local SeaweedFS); optionally the chaos run of one example over S3 for both, interleaved.

    python bench/bench_s3_requests.py [--baseline main] [--commits 40] [--chaos chain-research --repeat 2]

Request counts do not depend on the machine; the chaos run's seconds do (compare the ratio, not the seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPERATIONS = ("create", "commit", "close", "resolve", "open (resume)", "load", "load again", "open after a load")


def _message(index: int) -> dict:
    role = "user" if index % 2 == 0 else "assistant"
    message = {"role": role, "content": [{"text": f"message {index}"}]}
    return {"type": "message", "conv": "agent", "agent": "agent", "unit": "step[0]", "index": index, "message": message}


def count_requests(bucket: str, commits: int) -> dict[str, float]:
    """Requests of each operation on a fresh prefix (in this process, whichever source it imports)."""
    import uuid

    from strands_durable.store.s3 import S3Store, make_client
    from strands_durable.testing.s3_faults import CountingClient

    client = CountingClient(make_client())
    prefix = f"requests-{uuid.uuid4().hex[:8]}"
    counts: dict[str, float] = {}

    def measured(name: str, action, per: int = 1):
        client.reset()
        result = action()
        counts[name] = client.total / per
        return result

    store = S3Store(bucket, prefix, client=client)
    meta = {"workflow_name": "bench", "pattern": "chain", "created_at": "2026-01-01T00:00:00+00:00"}
    session = measured("create", lambda: store.create(meta, b"spec"))
    session_id = session.state.session_id

    def commit_all() -> None:
        for index in range(commits):
            session.commit([_message(index)])

    measured("commit", commit_all, per=commits)
    measured("close", session.close)
    # a resume as a later process does it: a new store, nothing remembered of the session, the id resolved, opened
    _forget_objects()
    resumer = S3Store(bucket, prefix, client=client)
    measured("resolve", lambda: resumer.resolve(session_id))
    reopened = measured("open (resume)", lambda: resumer.open(session_id))
    reopened.close()
    _forget_objects()
    reader = S3Store(bucket, prefix, client=client)
    measured("load", lambda: reader.load(session_id))
    measured("load again", lambda: reader.load(session_id))
    # what the chaos kit does after a killed run: the session loaded and judged, then resumed in the same process
    measured("open after a load", lambda: reader.open(session_id)).close()
    return counts


def _forget_objects() -> None:
    """Empty this process's cache of immutable objects (a tree without one has nothing to empty)."""
    try:
        from strands_durable.store.s3.cache import IMMUTABLE_OBJECTS
    except ImportError:
        return
    IMMUTABLE_OBJECTS.clear()


def _source_of(revision: str, into: Path) -> Path:
    """The `src/` of git revision `revision`, extracted under `into`."""
    archive = into / "src.tar"
    with open(archive, "wb") as sink:
        subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"], stdout=sink, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def _child_env(source: Path, server_env: dict[str, str]) -> dict[str, str]:
    return {**os.environ, **server_env, "PYTHONPATH": str(source)}


def _counts_in(source: Path, server_env: dict[str, str], bucket: str, commits: int) -> dict[str, float]:
    code = f"import json,sys; sys.path.insert(0, {str(ROOT)!r}); from bench.bench_s3_requests import count_requests; "
    code += f"print(json.dumps(count_requests({bucket!r}, {commits})))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=_child_env(source, server_env), capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _chaos_seconds(source: Path, server_env: dict[str, str], location: str, example: str, scratch: Path) -> float:
    spec = ROOT / "examples" / f"{example}.strands.yaml"
    args = [
        sys.executable,
        "-m",
        "pytest",
        f"--strands-chaos-sessions={location}",
        "--strands-chaos",
        "--strands-chaos-faults=interrupt,kill,concurrent",
        "--strands-chaos-max-points=30",
        "--strands-chaos-schedules=0",
        "-p",
        "no:cacheprovider",
        "-q",
        "-n",
        "0",
        str(spec),
    ]
    env = {**_child_env(source, server_env), "STRANDS_CHAOS_TMPDIR": str(scratch)}
    started = time.monotonic()
    done = subprocess.run(args, env=env, cwd=scratch, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"chaos run failed ({source}):\n{done.stdout[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", help="git revision to compare with (e.g. main)")
    parser.add_argument("--commits", type=int, default=40, help="durable commits in the session (default 40)")
    parser.add_argument("--chaos", help="also time the chaos run of this example over S3 (e.g. chain-research)")
    parser.add_argument("--repeat", type=int, default=1, help="chaos runs of each tree, interleaved")
    options = parser.parse_args()

    from strands_durable.store.s3 import make_client
    from strands_durable.testing.s3_server import start_server

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        server = start_server(work / "seaweedfs")
        try:
            admin = make_client(server.endpoint, server.access_key, server.secret_key)
            admin.create_bucket(Bucket="bench-requests")
            trees = {"this tree": ROOT / "src"}
            if options.baseline:
                (work / "baseline").mkdir()
                trees[options.baseline] = _source_of(options.baseline, work / "baseline")
            env = server.env()
            counts = {name: _counts_in(src, env, "bench-requests", options.commits) for name, src in trees.items()}
            names = list(trees)
            print(f"S3 requests per operation (a session of {options.commits} durable message commits)")
            print(f"  {'operation':<16}" + "".join(f"{name:>14}" for name in names))
            for operation in OPERATIONS:
                row = "".join(f"{counts[name].get(operation, float('nan')):>14.2f}" for name in names)
                print(f"  {operation:<16}{row}")
            if options.chaos:
                seconds: dict[str, list[float]] = {name: [] for name in names}
                for round_ in range(options.repeat):
                    for name in names if round_ % 2 == 0 else reversed(names):
                        scratch = work / f"chaos-{len(seconds[name])}-{names.index(name)}"
                        scratch.mkdir()
                        location = f"s3://bench-requests/chaos-{round_}-{names.index(name)}"
                        seconds[name].append(_chaos_seconds(trees[name], env, location, options.chaos, scratch))
                print(f"chaos over S3 of {options.chaos} (interrupt, kill, concurrent at gate bounds), seconds a run:")
                for name in names:
                    print(f"  {name:<14} " + " ".join(f"{value:6.1f}" for value in seconds[name]))
                if len(names) == 2:
                    ratio = sum(seconds[names[0]]) / sum(seconds[names[1]])
                    print(f"  ratio {names[0]} / {names[1]}: {ratio:.2f}x")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
