"""The plain-Agent fault harness (faults/agents/managers.py): SIGKILL and in-process crashes at SDK hooks and store
commits, both resume styles; the same harness finds the SDK's FileSessionManager failing where we do not."""

from __future__ import annotations

import os
import time

import pytest

from strands_durable.errors import ExitCode
from strands_durable.faults.agents import managers as agents
from strands_durable.faults.kit.forking import fork_child, wait_child

EVERY = 6  # a sample of the points (python -m strands_durable.faults.agents.managers explores them all)


def _failures(report: agents.Report) -> list[agents.Verdict]:
    return [v for v in report.verdicts if not v.ok]


@pytest.mark.parametrize("mode", ["kill", "raise"])
def test_a_plain_agent_survives_a_crash_at_sampled_hook_and_commit_points(tmp_path, mode):
    report = agents.explore("durable", tmp_path, every=EVERY, mode=mode)
    assert report.golden.concurrent, "the golden run's parallel tools did not overlap"
    assert len(report.verdicts) >= 2 * (len(report.golden.points) // EVERY)
    assert _failures(report) == []
    assert any(v.point.startswith("hook") for v in report.verdicts)
    assert any("store.before_commit" in v.point and not v.point.startswith("hook") for v in report.verdicts)


def test_the_same_harness_finds_the_file_session_managers_failures(tmp_path):
    report = agents.explore("sdk-file", tmp_path, every=EVERY)
    resend = [v for v in report.verdicts if v.style == "re-send"]
    assert any(v.invalid_requests for v in resend), "re-sending after a crash mid-turn breaks alternation"
    assert _failures(report)


def test_two_processes_invoking_one_session_exactly_one_proceeds(tmp_path):
    agents.warm_imports()
    world = agents.World(tmp_path / "one")
    world.root.mkdir()
    started = tmp_path / "started"

    def invoke() -> int:
        from strands import Agent, tool

        from strands_durable.sdk import DurableSessionManager

        @tool
        def slow(item: str) -> str:
            """Take a while."""
            started.touch()
            time.sleep(1.0)
            return "ok"

        agent = Agent(
            model=_script_model([[{"name": "slow", "input": {"item": "a"}}], "ok"]),
            tools=[slow],
            callback_handler=None,
            session_manager=DurableSessionManager("shared", world.sessions),
        )
        agent("go")
        return 0

    first = fork_child(invoke)
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    second = fork_child(invoke)
    outcomes = sorted([wait_child(first).code, wait_child(second).code])
    assert outcomes == [0, int(ExitCode.SESSION_UNUSABLE)]
    assert os.path.exists(world.sessions / "session_shared" / "journal.log")


def _script_model(script):
    from strands_durable.models.scripted import ScriptedModel

    return ScriptedModel(script)


def test_a_power_cut_before_any_fsync_loses_no_acknowledged_turn(tmp_path):
    report = agents.explore_power(tmp_path / "power")
    assert report.states > 50 and report.resumed > 0
    assert report.problems == []
