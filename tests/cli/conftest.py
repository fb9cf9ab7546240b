"""Fixtures for the CLI tests: `strands` in a child process, specs written as files, the sessions store."""

from __future__ import annotations

import os
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from strands_durable.store import LocalStore
from tests.cli.support import Child, strands_command


@pytest.fixture
def strands(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`strands(*args, env=..., stdin=...)`: the CLI in a child process, working directory tmp_path."""

    def run(*args: Any, env: dict[str, Any] | None = None, stdin: str | None = None):
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
