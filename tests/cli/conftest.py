"""Fixtures for the CLI tests: `strands` in a child process, specs written as files, the sessions store."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from strands_durable import LocalStore
from tests.cli.in_process import runs_in_process, strands_in_process
from tests.cli.support import Child, strands_command


@pytest.fixture
def strands(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`strands(*args, env=..., stdin=...)`: the CLI, working directory tmp_path; in a child process, except the
    sessions and validate commands under the test's own environment, which run in this one (tests/cli/in_process.py)
    """

    def run(*args: Any, env: dict[str, Any] | None = None, stdin: str | None = None):
        if runs_in_process(args, env):
            return strands_in_process(*args, cwd=tmp_path, stdin=stdin)
        return strands_command(*args, cwd=tmp_path, env=env, stdin=stdin)

    return run


@pytest.fixture
def write_spec(tmp_path: Path) -> Callable[..., Path]:
    def write(text: str, name: str = "spec.strands.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


@pytest.fixture
def sessions_dir() -> Path:
    return Path(os.environ["STRANDS_SESSIONS_DIR"])


@pytest.fixture
def store(sessions_dir: Path) -> LocalStore:
    return LocalStore(sessions_dir)


@pytest.fixture
def child(tmp_path: Path) -> Callable[..., Child]:
    started: list[Child] = []

    def start(*args: Any, env: dict[str, str] | None = None) -> Child:
        proc = Child(*args, cwd=tmp_path, env=env or {})
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.proc.poll() is None:
            proc.proc.kill()
            proc.proc.wait(timeout=10)


NAP_TOOL = '''\
import time
from pathlib import Path

from strands import tool


@tool
def nap() -> str:
    """Sleep two seconds (a tool that takes its time and cannot be cancelled); `nap.started` says it began."""
    Path(__file__).with_name("nap.started").touch()
    time.sleep(2)
    return "rested"
'''

NAP_SPEC = """\
version: 0
name: napping
runtime: {provider: scripted, model_id: script.json}
tools:
  python: ["napping:nap"]
agents:
  sleeper:
    prompt: You rest.
    tools: [nap]
pattern:
  type: chain
  config:
    steps:
      - agent: sleeper
        input: "Rest a while."
      - agent: sleeper
        input: "Say so."
"""
NAP_SCRIPT = {"sleeper": [[{"name": "nap", "input": {}}], "Rested.", "I rested."]}


@pytest.fixture
def nap_spec(tmp_path: Path) -> Path:
    """A two-step chain whose first step calls a 2-second tool: a stop has to wait for it."""
    (tmp_path / "napping.py").write_text(NAP_TOOL, encoding="utf-8")
    (tmp_path / "script.json").write_text(json.dumps(NAP_SCRIPT), encoding="utf-8")
    path = tmp_path / "nap.strands.yaml"
    path.write_text(NAP_SPEC, encoding="utf-8")
    return path
