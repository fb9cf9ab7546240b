"""`--clock` / STRANDS_CLOCK pin the session's clock, so two offline runs at one seed repeat exactly (token totals,
responses, artifacts); without it `current_time` and template timestamps follow the real clock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES

CLOCK = "2026-01-01T00:00:00Z"


def _run(strands, spec: Path, out: str, *flags: str, env: dict | None = None) -> dict:
    result = strands("run", spec, "--json", "--out", out, *flags, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("example", ["chain-research", "workflow-release-plan"])
def test_two_runs_with_a_pinned_clock_repeat_exactly(strands, tmp_path, example):
    spec = EXAMPLES / f"{example}.strands.yaml"
    first = _run(strands, spec, "one", "--clock", CLOCK)
    second = _run(strands, spec, "two", env={"STRANDS_CLOCK": CLOCK})  # the variable does the same
    assert first["session_id"] != second["session_id"]
    assert first["usage"] == second["usage"]
    assert first["last_response"] == second["last_response"]
    artifacts = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert artifacts == sorted(p.name for p in (tmp_path / "two").iterdir())
    for name in artifacts:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    shown = json.loads(strands("sessions", "show", first["session_id"], "--json").stdout)["session"]
    assert shown["created_at"].startswith("2026-01-01T00:00:00")


def test_a_malformed_clock_is_a_usage_error(strands):
    result = strands("run", EXAMPLES / "chain-research.strands.yaml", "--clock", "yesterday")
    assert result.returncode == 2
    assert result.stderr == (
        "Error: --clock (STRANDS_CLOCK) must be an ISO 8601 time such as 2026-01-01T00:00:00Z, got 'yesterday'\n"
    )
