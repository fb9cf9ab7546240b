"""Helpers for the CLI tests: small specs, `strands` as a child process, sessions made through the store."""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from strands_durable import LocalStore

CHAIN = """\
version: 0
name: tiny-chain
runtime: {provider: synthetic}
inputs:
  values: {topic: tides}
agents:
  writer:
    prompt: You write short notes about {{ topic }}.
pattern:
  type: chain
  config:
    steps:
      - agent: writer
        input: "Note one about {{ topic }}."
      - agent: writer
        input: "Note two, after: {{ steps[0].response }}"
      - agent: writer
        input: "Note three."
"""

HITL_CHAIN = """\
version: 0
name: review-chain
runtime: {provider: synthetic}
agents:
  writer:
    prompt: You draft and revise.
pattern:
  type: chain
  config:
    steps:
      - agent: writer
        input: "Draft a plan."
      - type: hitl
        prompt: "Approve the plan?"
        context_display: "Plan: {{ steps[0].response | truncate(40) }}"
      - agent: writer
        input: "Revise with the reviewer's answer: {{ hitl_response }}"
"""


def strands_command(*args: Any, cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None):
    full_env = {**os.environ, **(env or {})}
    for name, value in (env or {}).items():
        if value is None:
            full_env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "strands_durable", *map(str, args)],
        cwd=cwd,
        env=full_env,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


SNAPSHOT = b"version: 0\n"  # the spec snapshot of a session made by hand (its sha256 is recorded as a run's is)


def make_session(store: LocalStore, *, workflow: str = "made-by-hand", session_id: str | None = None) -> Any:
    """An open (leased) session created through the store, as a run would create it."""
    from strands_durable.store import layout

    meta = {
        "session_id": session_id or layout.new_session_id(),
        "workflow_name": workflow,
        "pattern": "chain",
        "spec_path": "/nowhere/spec.yaml",
        "spec_hash": hashlib.sha256(SNAPSHOT).hexdigest(),
        "variables": {"topic": "tides"},
        "created_at": "2024-01-01T00:00:00+00:00",
        "runtime": {"provider": "synthetic", "seed": 0},
    }
    return store.create(meta, SNAPSHOT)


def session_ids_in(stdout: str) -> list[str]:
    import re

    return re.findall(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", stdout)


class Child:
    """A running `strands` child whose output lines are collected by threads, so a test can wait for one."""

    def __init__(self, *args: Any, cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "strands_durable", *map(str, args)],
            cwd=cwd,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self._lines: queue.Queue[tuple[str, str]] = queue.Queue()
        self._threads = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, self.out, "out"), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, self.err, "err"), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _pump(self, stream: Any, into: list[str], name: str) -> None:
        for line in stream:
            into.append(line.rstrip("\n"))
            self._lines.put((name, line))

    def wait_for(self, needle: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(needle in line for line in self.out + self.err):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (self.proc.poll() is not None and self._lines.empty()):
                if any(needle in line for line in self.out + self.err):
                    return
                raise AssertionError(f"never saw {needle!r}; stdout={self.out} stderr={self.err}")
            with contextlib.suppress(queue.Empty):
                self._lines.get(timeout=min(remaining, 0.5))

    def finish(self, timeout: float = 60.0) -> int:
        code = self.proc.wait(timeout=timeout)
        for thread in self._threads:
            thread.join(timeout=10)
        return code


def wait_for_nap(nap_spec: Path, timeout: float = 60.0) -> None:
    """Wait until the nap tool of `nap_spec` (tests/cli/conftest.py) has begun its 2-second sleep, so a signal sent
    now finds a tool running: a step's EXECUTING line comes before its model call, and on a loaded machine a signal
    sent at that line can stop the run before the tool starts."""
    started = nap_spec.with_name("nap.started")
    deadline = time.monotonic() + timeout
    while not started.exists():
        assert time.monotonic() < deadline, "the nap tool never started"
        time.sleep(0.02)
