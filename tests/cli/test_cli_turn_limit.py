"""A unit of more tool turns than the Strands event loop can recurse (it calls itself once per turn: about 310
under Python's default recursion limit) fails with an error that says what happened and what to do, exit 10, not a
raw RecursionError; every turn made is committed and a resume goes on from the last one (issue 39, item 12)."""

from __future__ import annotations

import re

import pytest

from strands_durable import LocalStore
from tests.cli.support import session_ids_in, strands_command
from tests.tools.support import call, scripted_spec, tool_results

pytestmark = pytest.mark.slow

TURNS = 400
TURN_LIMIT = 310  # what the error and the docs say (strands_durable.errors.TURN_LIMIT)


def test_a_unit_past_the_turn_limit_says_so_and_a_resume_finishes_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("STRANDS_SESSIONS_DIR", str(tmp_path / "sessions"))
    spec = scripted_spec(
        tmp_path, "[calculator]", script=[call("calculator", expression=f"{n} + 1") for n in range(TURNS)]
    )
    first = strands_command("run", spec, cwd=tmp_path)
    assert first.returncode == 10, first.stderr
    session_id = session_ids_in(first.stdout + first.stderr)[0]
    error = first.stderr.splitlines()[-1]
    match = re.fullmatch(
        r"Error: step\[0\]:worker: the agent took more tool turns in one invocation than the Strands event loop "
        rf"allows \(it recurses once per turn: about {TURN_LIMIT}\); its (\d+) turns so far are committed: "
        rf"`strands run --resume {session_id}` goes on from the last one \(about {TURN_LIMIT} more per resume\), or "
        r"give the agent a task that needs fewer tool calls",
        error,
    )
    assert match, error
    made = int(match[1])
    assert TURN_LIMIT - 30 <= made <= TURN_LIMIT + 30, made
    store = LocalStore(tmp_path / "sessions")
    assert len(tool_results(store, session_id)) >= made - 1

    resumed = strands_command("run", "--resume", session_id, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    results = tool_results(store, session_id)
    assert [r["content"][0]["text"] for r in results] == [str(n + 1) for n in range(TURNS)]
