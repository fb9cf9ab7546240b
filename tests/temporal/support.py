"""Worker processes and CLI runs for the Temporal tests: real `strands worker` / `strands run` processes."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SPECS = Path(__file__).resolve().parent / "specs"


def child_env(*, with_tests: bool = True, **extra: str) -> dict[str, str]:
    """The environment of a child: our sources first, and the test modules (their Python tools) unless not."""
    env = dict(os.environ)
    paths = [str(ROOT / "src"), str(ROOT)] if with_tests else [str(ROOT / "src")]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(extra)
    return env


@dataclass
class WorkerProcess:
    process: subprocess.Popen
    lines: list[str] = field(default_factory=list)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    @property
    def identity(self) -> str:
        return str(self.process.pid)


def start_worker(
    started: list[WorkerProcess],
    address: str,
    sessions_dir: str,
    task_queue: str,
    *,
    cwd: Path = ROOT,
    with_tests: bool = True,
    test_worker: tuple[str, ...] | None = None,
    units: int | None = None,
    **env: str,
) -> WorkerProcess:
    """A `strands worker` process, returned once it serves the task queue (`with_tests=False`, run from another
    `cwd`: a worker on which the test modules, and so their Python tools, cannot be imported). `test_worker`:
    run tests/temporal/worker_main.py with these extra arguments instead (an old release, a ledger, a hold);
    `units`: its --max-concurrent-units."""
    program = ["tests.temporal.worker_main", *test_worker] if test_worker is not None else ["strands_durable", "worker"]
    command = [sys.executable, "-m", *program, "--temporal", address]
    command += ["--sessions-dir", sessions_dir, "--task-queue", task_queue]
    command += [] if units is None else ["--max-concurrent-units", str(units)]
    process = subprocess.Popen(
        command, cwd=cwd, env=child_env(with_tests=with_tests, **env), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    worker = WorkerProcess(process)
    started.append(worker)
    ready = threading.Event()

    def read() -> None:
        for line in process.stdout:  # type: ignore[union-attr]
            worker.lines.append(line)
            if line.startswith("Worker on "):
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(60):
        worker.kill()
        raise AssertionError("the worker did not start:\n" + "".join(worker.lines))
    return worker


def strands(*args: str, timeout: float = 180, **env: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "strands_durable", *args]
    return subprocess.run(command, cwd=ROOT, env=child_env(**env), capture_output=True, text=True, timeout=timeout)


def wait_for(predicate: Any, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


async def activity_units(address: str, session_id: str) -> list[tuple[str | None, str]]:
    """(unit, worker identity) of every activity attempt the run's workflow history started, in order."""
    from temporalio.client import Client

    client = await Client.connect(address)
    scheduled: dict[int, str | None] = {}
    attempts: list[tuple[str | None, str]] = []
    async for event in client.get_workflow_handle(session_id).fetch_history_events():
        if event.HasField("activity_task_scheduled_event_attributes"):
            payload = event.activity_task_scheduled_event_attributes.input.payloads[0].data
            scheduled[event.event_id] = json.loads(payload)["unit"]
        elif event.HasField("activity_task_started_event_attributes"):
            started = event.activity_task_started_event_attributes
            attempts.append((scheduled[started.scheduled_event_id], started.identity))
    return attempts


def patches_and_memos(history: dict) -> tuple[list[str], int]:
    """The `workflow.patched` ids a history's markers record, in order, and how many memo changes it holds
    (`history`: a workflow history as JSON, from a recorded file or `WorkflowHistory.to_json()`)."""
    patches: list[str] = []
    memos = 0
    for event in history["events"]:
        kind = event.get("eventType")
        if kind == "EVENT_TYPE_MARKER_RECORDED":
            attributes = event["markerRecordedEventAttributes"]
            if attributes["markerName"] == "core_patch":
                data = attributes["details"]["patch-data"]["payloads"][0]["data"]
                patches.append(json.loads(base64.b64decode(data))["id"])
        elif kind == "EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED":
            memos += 1
    return patches, memos


async def history_json(address: str, session_id: str) -> dict:
    """A run's whole workflow history as JSON, as the server holds it now."""
    from temporalio.client import Client

    client = await Client.connect(address)
    history = await client.get_workflow_handle(session_id).fetch_history()
    return json.loads(history.to_json())
