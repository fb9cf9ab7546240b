"""Every command handles a closed stdout as `strands run` does: exit 141, no `Error: BrokenPipeError`, no traceback.

The reader of a real pipe is closed before the command writes (every write then fails, so the outcome does not
depend on timing), and `strands sessions list | head -1` runs repeatedly through a shell, as users type it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.cli.support import CHAIN, make_session
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow


def _with_closed_stdout(*args: str, cwd) -> subprocess.CompletedProcess[str]:
    """`strands ARGS` whose stdout is a pipe nobody reads any more (its reader closed before it starts)."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run(
            [sys.executable, "-m", "strands_durable", *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(writer)


@pytest.fixture
def finished_session(store, tmp_path) -> str:
    session = make_session(store)
    session.commit([{"type": "status", "status": "completed"}], path="complete")
    session.close()
    return session.state.session_id


COMMANDS = [
    ("--help",),
    ("--version",),
    ("sessions", "--help"),
    ("sessions", "list"),
    ("sessions", "list", "--json"),
    ("sessions", "show", "{id}"),
    ("sessions", "show", "{id}", "--json"),
    ("sessions", "export", "{id}"),
    ("sessions", "check", "{id}"),
    ("sessions", "repair", "{id}"),
    ("sessions", "cleanup", "--older-than", "30m", "--dry-run"),
    ("validate", "{spec}"),
    ("run", "--help"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: " ".join(args))
def test_a_command_whose_stdout_is_closed_exits_141_without_an_error(args, finished_session, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(CHAIN, encoding="utf-8")
    argv = [a.format(id=finished_session, spec=spec) for a in args]
    result = _with_closed_stdout(*argv, cwd=tmp_path)
    assert (result.returncode, result.stderr) == (141, ""), result.stderr


def test_a_run_whose_stdout_is_closed_pauses_and_says_how_to_resume(tmp_path, store):
    result = _with_closed_stdout("run", str(EXAMPLES / "chain-research.strands.yaml"), "--out", "out", cwd=tmp_path)
    assert result.returncode == 141, result.stderr
    (summary,) = store.list()
    assert (summary.status, summary.reason) == ("paused", "interrupted")
    assert result.stderr.splitlines() == [
        f"Interrupted (stdout closed): session {summary.session_id} paused at a safe point",
        f"Resume with: strands run --resume {summary.session_id}",
    ]


def test_sessions_list_piped_into_head_never_reports_a_broken_pipe(store, tmp_path):
    for _ in range(60):  # a listing of several buffers: `head -1` goes away while later ones are written
        make_session(store).close()
    command = f"{sys.executable} -m strands_durable sessions list --json 2>err.txt | head -1 >first.txt"
    for attempt in range(8):
        done = subprocess.run(
            ["bash", "-c", command + "; echo ${PIPESTATUS[0]}"],
            cwd=tmp_path,
            env=os.environ,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert done.stdout.strip() in ("0", "141"), (attempt, done.stdout)
        assert (tmp_path / "err.txt").read_text(encoding="utf-8") == "", attempt
        assert (tmp_path / "first.txt").read_text(encoding="utf-8") == "[\n"
