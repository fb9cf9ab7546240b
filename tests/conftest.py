"""Shared fixtures: an isolated sessions directory, and the repository's paths."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]  # the chaos plugin's self-tests (tests/plugin) drive pytest inside pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` starts one worker more than there are cores: many tests spend much of their time waiting (on
    fsync, on the children they kill and resume, on a crashed run's threads), and a worker waiting leaves its core
    idle. PYTEST_XDIST_AUTO_NUM_WORKERS still chooses, as pytest-xdist documents."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist's own hook reads it
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1


@pytest.fixture(autouse=True)
def _isolated_sessions(tmp_path, monkeypatch):
    """No test touches ~/.strands: sessions go to a per-test directory unless a test says otherwise."""
    monkeypatch.setenv("STRANDS_SESSIONS_DIR", str(tmp_path / "sessions"))
    monkeypatch.setenv("BYPASS_TOOL_CONSENT", "true")
    monkeypatch.setenv("STRANDS_DURABLE_STRICT", "1")  # every commit validates the histories it touches
    monkeypatch.delenv("STRANDS_SYNTHETIC_LATENCY_MS", raising=False)


@pytest.fixture(scope="session", autouse=True)
def _temp_directory_left_empty(tmp_path_factory):
    """ "The temp directory" of every test (and its subprocesses) is one directory per pytest process, and the
    chaos scratch directory another (on /dev/shm when there is one, as in real runs); both must end empty: a
    test that leaves a session or `strands-chaos-*` folder behind fails the run here."""
    system_tmp = tmp_path_factory.mktemp("system-tmp")
    shm = Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else None
    chaos_tmp = Path(tempfile.mkdtemp(prefix="strands-tests-", dir=shm))
    patch = pytest.MonkeyPatch()
    patch.setenv("TMPDIR", str(system_tmp))
    patch.setenv("STRANDS_CHAOS_TMPDIR", str(chaos_tmp))
    patch.setattr(tempfile, "tempdir", str(system_tmp))
    yield
    patch.undo()
    left = sorted(str(p) for d in (system_tmp, chaos_tmp) for p in d.iterdir())
    shutil.rmtree(chaos_tmp, ignore_errors=True)
    assert not left, f"the tests left these behind in the temp directory: {left}"
