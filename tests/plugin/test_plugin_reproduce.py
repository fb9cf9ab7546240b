"""Every failing chaos item prints one `reproduce: <command>` line (and the JSON report carries the command): run
from the session's directory, it runs that item alone and fails the same way, every time."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys

import pytest

from tests.plugin.support import MUTATIONS, add_research_spec

ARGS = ("--strands-chaos", "--strands-chaos-schedules=0", "--strands-chaos-max-points=8", "-p", "no:cacheprovider")


def failure_block(out: str, nodeid: str) -> list[str]:
    """The failure text of one item: its rule lines, from `crash point:` to its reproduce line."""
    start = out.index(f"{nodeid}\ncrash point:")
    end = out.index("reproduce: ", start)
    return out[start:end].strip().splitlines()


def as_argv(command: str) -> list[str]:
    """The reproduce command as this interpreter runs it (`pytest` may not be on PATH in a bare venv)."""
    argv = shlex.split(command)
    assert argv[0] == "pytest"
    return [sys.executable, "-m", "pytest", *argv[1:]]


@pytest.mark.slow
def test_a_failing_points_reproduce_line_fails_the_same_way_five_times(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester)
    pytester.makeconftest(MUTATIONS["runner_reruns_committed_tools"])  # a planted bug: some points fail
    report = pytester.path / "chaos.json"
    result = pytester.runpytest_subprocess(*ARGS, f"--strands-chaos-report={report}")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    items = json.loads(report.read_text())["items"]
    failing = [item for item in items if item["outcome"] == "failed"]
    assert failing and all(item.get("reproduce") for item in failing)
    assert not any("reproduce" in item for item in items if item["outcome"] == "passed")
    item = failing[0]
    name = item["nodeid"]
    command = item["reproduce"]
    assert f"reproduce: {command}" in out.splitlines()  # the printed line and the report's are the same
    assert "--strands-chaos-seed=0" in command and name.split("::", 1)[1] in command
    expected = failure_block(out, name)
    assert any(line.startswith("[tool-rerun]") for line in expected)
    for _ in range(5):
        again = subprocess.run(as_argv(command), cwd=pytester.path, capture_output=True, text=True, timeout=300)
        assert again.returncode == pytest.ExitCode.TESTS_FAILED, again.stdout[-2000:]
        assert re.search(r"^1 failed in ", again.stdout.splitlines()[-1]) or "1 failed" in again.stdout
        assert failure_block(again.stdout, name) == expected
        assert f"reproduce: {command}" in again.stdout.splitlines()  # the rerun names itself


def test_the_reproduce_command_carries_the_options_that_decide_an_item(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_seen="""
        import pytest

        def test_fails(strands_chaos):
            strands_chaos.run_agent("agents:build_agent", ["hello"], no_such_option=1)
        """
    )
    result = pytester.runpytest_inprocess(
        "--strands-chaos",
        "--strands-chaos-seed=7",
        "--strands-chaos-full",
        "--strands-chaos-faults=interrupt,kill",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    line = next(line for line in result.stdout.lines if "reproduce: " in line)
    command = line.split("reproduce: ", 1)[1]
    assert shlex.split(command) == [
        "pytest",
        "--strands-chaos",
        "--strands-chaos-seed=7",
        "--strands-chaos-faults=interrupt,kill",
        "--strands-chaos-full",
        "-p",
        "no:randomly",
        "test_seen.py::test_fails",
    ]
