"""Helpers of the S3 tests: stores over the local server with counting or faulting clients, small sessions."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_durable import CrashPoints, S3Store
from strands_durable.store.layout import new_session_id
from strands_durable.store.s3.client import make_client
from strands_durable.testing.s3_server import LocalS3Server, free_ports

FAST_RETRIES = (0.01, 0.02, 0.04)
SERVERS = ("seaweedfs", "moto")  # the S3 implementations the tests asking for `server` run on


def server_name(server: Any) -> str:
    """Which of SERVERS `server` is."""
    return "moto" if isinstance(server, MotoServer) else "seaweedfs"


def as_a_fresh_process() -> None:
    """Forget the immutable objects this process has read or written (store/s3/cache.py): what follows reads the
    bucket as another process would."""
    from strands_durable.store.s3.cache import IMMUTABLE_OBJECTS

    IMMUTABLE_OBJECTS.clear()


def client_for(server: LocalS3Server, *, access_key: str | None = None, secret_key: str | None = None) -> Any:
    return make_client(server.endpoint, access_key or server.access_key, secret_key or server.secret_key)


@dataclass(frozen=True)
class Space:
    """A test's own place in the shared bucket."""

    bucket: str
    prefix: str

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"


@dataclass
class MotoServer:
    """moto's S3 server (`python -m moto.server`) in its own process on loopback; quacks like LocalS3Server where
    the tests use it (`endpoint`, credentials, `env()`). It accepts any credentials. A process, not moto's
    ThreadedMotoServer: a server thread in the test process would make the fork-based fault tests refuse to fork."""

    process: subprocess.Popen
    endpoint: str
    access_key: str = "moto-test-key"
    secret_key: str = "moto-test-secret"

    def env(self) -> dict[str, str]:
        return LocalS3Server.env(self)  # type: ignore[arg-type]  # the same variables, read from the same fields

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(10)


def start_moto(log: Path) -> MotoServer:
    """Start moto's S3 on a free loopback port and wait until it answers (ModuleNotFoundError without moto)."""
    import importlib.util
    import socket

    if importlib.util.find_spec("moto.server") is None:
        raise ModuleNotFoundError("moto[server] is not installed", name="moto")
    (port,) = free_ports(1)
    with open(log, "ab") as sink:  # the server's request log; the file layer is for session data
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], stdout=sink, stderr=sink
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ModuleNotFoundError(f"moto server exited with {process.returncode} (see {log})", name="moto")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return MotoServer(process, f"http://127.0.0.1:{port}")
        time.sleep(0.1)
    process.kill()
    raise ModuleNotFoundError(f"moto server did not answer on port {port} (see {log})", name="moto")


BUCKET_KINDS = ("plain", "versioned", "encrypted")
_BUCKETS: dict[tuple[str, str], str] = {}  # (server endpoint, kind) -> its bucket, made once per test session


def bucket_on(server: Any, kind: str) -> str:
    """A bucket of `kind` on `server`: plain, versioned, or with default encryption (SSE-S3, AES256); one per
    session and kind (creating one costs SeaweedFS ~0.5 s), tests keep apart by key prefix."""
    made = _BUCKETS.get((server.endpoint, kind))
    if made is None:
        made = f"strands-{kind}-{uuid.uuid4().hex[:12]}"
        client = client_for(server)
        client.create_bucket(Bucket=made)
        if kind == "versioned":
            client.put_bucket_versioning(Bucket=made, VersioningConfiguration={"Status": "Enabled"})
        elif kind == "encrypted":
            rule = {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
            client.put_bucket_encryption(Bucket=made, ServerSideEncryptionConfiguration={"Rules": [rule]})
        _BUCKETS[(server.endpoint, kind)] = made
    return made


def store_for(server: LocalS3Server, space: Space, *, client: Any = None, **opts: Any) -> S3Store:
    opts.setdefault("retry_delays", FAST_RETRIES)
    return S3Store(space.bucket, space.prefix, client=client if client is not None else client_for(server), **opts)


def meta(session_id: str | None = None) -> dict[str, Any]:
    return {
        "session_id": session_id or new_session_id(),
        "workflow_name": "s3-test",
        "pattern": "chain",
        "created_at": "2026-01-01T00:00:00+00:00",
    }


def unit(index: int) -> dict[str, Any]:
    return {"type": "unit", "unit": f"step[{index}]", "record": {"response": f"answer {index}", "status": "done"}}


def unit_message(name: str, index: int) -> dict[str, Any]:
    """Message `index` of unit `task:<name>`'s own conversation (user and assistant turns alternate)."""
    role = "user" if index % 2 == 0 else "assistant"
    message = {"role": role, "content": [{"text": f"{name} says {index}"}]}
    return {"type": "message", "conv": f"task:{name}:agent", "agent": "agent", "unit": f"task:{name}", "index": index,
            "message": message}  # fmt: skip


def interrupted_at_first_step(*args: Any, cwd: Any) -> Any:
    """`strands run *args` (slowed by synthetic latency) stopped with Ctrl+C at its first step; the finished Child."""
    import signal

    from tests.cli.support import Child

    run = Child("run", *args, cwd=cwd, env={"STRANDS_SYNTHETIC_LATENCY_MS": "300"})
    try:
        run.wait_for("Step 1/3")
        run.proc.send_signal(signal.SIGINT)
        assert run.finish() == 130, (run.out, run.err)
    finally:
        if run.proc.poll() is None:
            run.proc.kill()
    return run


@dataclass
class PausedWriter:
    """A session's writer held between its lease check and its PUT (see `pause_a_writer`)."""

    session: Any
    outcome: list[BaseException | None]
    resume_put: threading.Event
    thread: threading.Thread

    def finish(self) -> BaseException | None:
        """Let the paused commit go on; what it raised (None when it landed)."""
        self.resume_put.set()
        self.thread.join(30)
        assert self.outcome, "the paused writer did not finish"
        return self.outcome[0]


def pause_a_writer(
    store: S3Store,
    *,
    prepare: Callable[[Any], None] | None = None,
    expire_s: float = 0.8,
    open_session: Callable[[CrashPoints], Any] | None = None,
    commits: tuple[dict[str, Any], dict[str, Any]] = (unit(0), unit(1)),
) -> PausedWriter:
    """A new session (one commit) whose next commit passes its lease check and then pauses (a crash-point
    subscriber at store.before_commit holds it) until `finish()`; it renews nothing, and `expire_s` later its lease
    has expired. `prepare(session)` runs before that commit (e.g. a tool writing a scratch file). `open_session`:
    how to get the writer instead (given the crash points), e.g. a unit's writer of an existing session;
    `commits`: its first and its paused commit's event."""
    bus = CrashPoints()
    at_put, resume_put = threading.Event(), threading.Event()

    def pause_before_put(point: Any) -> None:
        if point.site == "store.before_commit" and point.path == "paused":
            at_put.set()
            resume_put.wait(30)

    bus.subscribe(pause_before_put)
    session = store.create(meta(), b"spec", crash_points=bus) if open_session is None else open_session(bus)
    session.commit([commits[0]])
    if prepare is not None:
        prepare(session)
    outcome: list[BaseException | None] = []

    def write() -> None:
        try:
            session.commit([commits[1]], path="paused")
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    assert at_put.wait(10)
    session._lease.stop_renewing()  # the paused process renews nothing
    time.sleep(expire_s)
    return PausedWriter(session, outcome, resume_put, thread)
