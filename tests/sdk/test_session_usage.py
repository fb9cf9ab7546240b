"""Session usage: tokens of model answers a kill lost before their commit are reported apart from the committed
ones, in Python (`DurableSessionManager.session_usage()`) and in `strands sessions show`."""

from __future__ import annotations

import json

from strands_durable.faults.kit.forking import fork_child, wait_child
from tests.cli.support import strands_command

from .support import PROMPTS, World

ZERO = {"input": 0, "output": 0, "total": 0}


def _tokens(usage: dict[str, int]) -> dict[str, int]:
    return {"input": usage["inputTokens"], "output": usage["outputTokens"], "total": usage["totalTokens"]}


def test_tokens_of_an_answer_killed_before_its_commit_are_reported_as_lost(tmp_path):
    world = World(tmp_path / "sessions")

    def converse_and_die() -> int:
        agent = world.agent(kill_at="default/inv[1]/turn[0]/model.answered")
        for prompt in PROMPTS:
            agent(prompt)
        return 0

    died = wait_child(fork_child(converse_and_die))
    assert died.signal is not None, f"the child was not killed ({died.describe()})"

    clean = World(tmp_path / "golden")
    golden = clean.agent()
    golden_results = [golden(prompt) for prompt in PROMPTS]
    golden_usage = golden._session_manager.session_usage()
    assert golden_usage.lost == ZERO and golden_usage.committed["total"] > 0

    crashed = world.agent()._session_manager.session_usage()
    # the answer to the second prompt was received (its usage known) but never committed
    assert golden.messages[5]["role"] == "assistant" and golden.messages[4]["content"] == [{"text": PROMPTS[1]}]
    lost_answer = _tokens(golden.messages[5]["metadata"]["usage"])
    assert crashed.lost == lost_answer
    env = {"STRANDS_SESSIONS_DIR": str(world.sessions)}
    shown = strands_command("sessions", "show", "expenses-1", "--json", cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["session"]["token_usage_lost"] == lost_answer
    panel = strands_command("sessions", "show", "expenses-1", cwd=tmp_path, env=env)
    assert f"Total: {lost_answer['total']}" in panel.stdout.split("Tokens lost")[1], panel.stdout

    resumed = world.agent()
    result = resumed()
    usage = resumed._session_manager.session_usage()
    assert usage.committed == golden_usage.committed  # the history holds exactly the uninterrupted run's answers
    assert usage.lost == lost_answer  # the re-asked answer is committed; the lost one stays reported
    expected = golden_results[-1].metrics.agent_invocations[-1].usage
    assert result.metrics.agent_invocations[-1].usage == expected


def test_an_answer_discarded_by_a_hooks_retry_is_counted_as_lost(tmp_path):
    from strands.hooks import AfterModelCallEvent

    world = World(tmp_path / "sessions")
    agent = world.agent()
    retried: list[bool] = []

    def retry_once(event: AfterModelCallEvent) -> None:
        if event.stop_response is not None and not retried:
            retried.append(True)
            event.retry = True

    agent.hooks.add_callback(AfterModelCallEvent, retry_once)
    agent(PROMPTS[0])
    usage = agent._session_manager.session_usage()
    first = _tokens(agent.messages[1]["metadata"]["usage"])  # the same request, answered the same way twice
    assert usage.lost == first
