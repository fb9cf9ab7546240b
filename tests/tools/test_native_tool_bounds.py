"""Model-chosen inputs cannot hang a run (issue 39, item 11): `calculator` refuses a result larger than its limit
before computing it, `grep` and `search` match in linear time (RE2), each error names the limit, and the first
Ctrl+C stops a run that calls them. The runs are real `strands run` processes with a time limit: before these
bounds each of them hung (and every resume hung again)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from strands_durable import LocalStore
from tests.cli.support import session_ids_in
from tests.tools.support import call, result_text, scripted_spec, tool_results

pytestmark = pytest.mark.slow

HOSTILE_TEXT = "a" * 30_000 + "b\n"  # `(a+)+$` backtracks 2**30000 ways over it in Python's `re`
HOSTILE_PATTERN = "(a+)+$"


def _spec(tmp_path: Path, tools: str, turns: list) -> Path:
    return scripted_spec(tmp_path, tools, script=turns)


def _run(tmp_path: Path, spec: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "strands_durable", "run", str(spec), "--sessions-dir", str(tmp_path / "sessions")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_a_calculator_result_past_the_limit_is_refused_before_it_is_computed(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path,
        "[calculator]",
        [call("calculator", expression="(((9**100)**100)**100)**100"), call("calculator", expression="(9**100)**10")],
    )
    started = time.monotonic()
    ran = _run(tmp_path, spec)
    assert ran.returncode == 0, ran.stderr
    assert time.monotonic() - started < 60
    store = LocalStore(tmp_path / "sessions")
    huge, fine = tool_results(store, session_ids_in(ran.stdout)[0])
    assert huge["status"] == "error"
    assert "more than the calculator's limit of 10000 bits" in result_text(huge), result_text(huge)
    assert fine["status"] == "success" and result_text(fine) == str((9**100) ** 10)


def test_grep_and_search_with_a_catastrophic_pattern_finish(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path,
        "[file_write, grep, search]",
        [
            call("file_write", path="big.txt", content=HOSTILE_TEXT + "xaa\n"),
            call("grep", pattern=HOSTILE_PATTERN, path="big.txt"),
            call("search", query=HOSTILE_PATTERN, path="big.txt", is_regex=True),
            call("grep", pattern=r"(a)\1", path="big.txt"),
        ],
    )
    ran = _run(tmp_path, spec)
    assert ran.returncode == 0, ran.stderr
    store = LocalStore(tmp_path / "sessions")
    _, grepped, searched, backreference = tool_results(store, session_ids_in(ran.stdout)[0])
    assert grepped["status"] == "success" and result_text(grepped) == "xaa"
    assert searched["status"] == "success"
    assert result_text(searched) == f"Found 1 match(es) for '{HOSTILE_PATTERN}' in big.txt:\n\n   2 | x>>>aa<<<"
    assert backreference["status"] == "error"
    assert "no backreferences or look-around" in result_text(backreference), result_text(backreference)


def test_the_first_ctrl_c_stops_a_run_of_hostile_tool_inputs(tmp_path: Path) -> None:
    turns = [call("file_write", path="big.txt", content=HOSTILE_TEXT)]
    for _ in range(200):
        turns += [
            call("grep", pattern=HOSTILE_PATTERN, path="big.txt"),
            call("calculator", expression="(((9**100)**100)**100)**100"),
        ]
    spec = _spec(tmp_path, "[file_write, grep, calculator]", turns)
    (tmp_path / "sessions").mkdir()
    child = subprocess.Popen(
        [sys.executable, "-m", "strands_durable", "run", str(spec), "--sessions-dir", str(tmp_path / "sessions")],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        store = LocalStore(tmp_path / "sessions")
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and child.poll() is None:
            ids = store.session_ids()
            if ids and len(tool_results(store, ids[0])) >= 2:  # a grep with the hostile pattern has run
                break
            time.sleep(0.2)
        assert child.poll() is None, child.communicate()
        child.send_signal(signal.SIGINT)
        stopped = time.monotonic()
        _, err = child.communicate(timeout=30)
        assert child.returncode == 130, err
        assert time.monotonic() - stopped < 15, err
        assert "Resume with: strands run --resume" in err
        assert store.load(store.session_ids()[0]).reason == "interrupted"
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
