"""Shared fixtures: an isolated sessions directory, and the repository's paths."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]  # the chaos plugin's self-tests (tests/plugin) drive pytest inside pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


@pytest.fixture(autouse=True)
def _isolated_sessions(tmp_path, monkeypatch):
    """No test touches ~/.strands: sessions go to a per-test directory unless a test says otherwise."""
    monkeypatch.setenv("STRANDS_SESSIONS_DIR", str(tmp_path / "sessions"))
    monkeypatch.setenv("BYPASS_TOOL_CONSENT", "true")
    monkeypatch.setenv("STRANDS_DURABLE_STRICT", "1")  # every commit validates the histories it touches
    monkeypatch.delenv("STRANDS_SYNTHETIC_LATENCY_MS", raising=False)
