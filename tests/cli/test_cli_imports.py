"""`strands --help`, `sessions list` and `sessions show` start fast: they never import strands-agents, nor the
Temporal SDK unless a session runs on Temporal."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.cli.support import make_session

pytestmark = pytest.mark.slow

WRAPPER = """
import sys
from strands_durable.cli.app import app
try:
    app(sys.argv[1:], prog_name="strands")
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in sys.modules if m in ("strands", "temporalio") or m.startswith(
    ("strands.", "strands_durable.runner", "strands_durable.agent", "temporalio.")))
print("EXIT", code, "HEAVY", heavy, file=sys.stderr)
"""


def run_in_wrapper(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WRAPPER, *args], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize(
    "args",
    [("--help",), ("sessions", "--help"), ("sessions", "list"), ("sessions", "list", "--help"),
     ("sessions", "list", "--temporal"), ("run", "--help")],
)  # fmt: skip
def test_light_commands_do_not_import_strands_agents(args):
    result = run_in_wrapper(*args)
    assert result.stderr.splitlines()[-1] == "EXIT 0 HEAVY []", result.stderr


def test_sessions_show_does_not_import_strands_agents(store):
    session = make_session(store)
    session.close()
    result = run_in_wrapper("sessions", "show", session.state.session_id)
    assert session.state.session_id in result.stdout
    assert result.stderr.splitlines()[-1] == "EXIT 0 HEAVY []", result.stderr


def test_the_wrapper_would_see_strands_agents_imported_by_a_run(store, tmp_path):
    from tests.cli.support import CHAIN

    spec = tmp_path / "spec.yaml"
    spec.write_text(CHAIN, encoding="utf-8")
    result = run_in_wrapper("run", str(spec), "--out", str(tmp_path / "out"))
    last = result.stderr.splitlines()[-1]
    assert last.startswith("EXIT 0 HEAVY [") and "'strands'" in last and "'strands_durable.runner.run'" in last
