"""`DurableSessionManager` on `s3://`: a real strands.Agent's conversation committed to the local SeaweedFS, restored
exactly by a fresh agent on a fresh manager, and a second holder of the same session refused."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from strands import tool

from strands_durable.errors import SessionInUse
from strands_durable.history import normalize, validate
from strands_durable.store import open_store
from tests.sdk.support import PROMPTS, World

SESSION = "expenses-1"


@pytest.mark.parametrize("addressing", ["store=open_store", "STRANDS_SESSIONS_DIR"])
def test_a_fresh_agent_on_a_fresh_manager_restores_the_s3_session_exactly(
    s3_env, space, tmp_path, monkeypatch, addressing
):
    by_env = addressing == "STRANDS_SESSIONS_DIR"
    monkeypatch.setenv("STRANDS_SESSIONS_DIR", space.url if by_env else "")
    world = World(None if by_env else tmp_path / "unused")  # no directory: the manager takes the environment's

    def fresh_agent() -> Any:
        return world.agent() if by_env else world.agent(store=open_store(space.url))

    agent = fresh_agent()
    agent.state.set("currency", "EUR")
    results = [agent(prompt) for prompt in PROMPTS]
    effects, requests = len(world.effects), len(world.requests)

    again = fresh_agent()
    assert normalize(again.messages) == normalize(agent.messages)
    assert len(again.messages) == 8
    assert again.state.get("currency") == "EUR"
    assert (len(world.effects), len(world.requests)) == (effects, requests), "restoring ran a tool or the model"
    state = open_store(space.url).load(SESSION)
    assert state.status == "idle" and state.meta["pattern"] == "agent"
    assert validate(state.conversations["default"].messages, provider="bedrock", mode="stored") == []
    assert str(results[-1]) == "Recorded the dinner.\n"
    assert not (tmp_path / "unused").exists(), "the session went to a local directory"


def test_a_second_holder_of_an_s3_session_is_refused_naming_the_first(s3_env, space, tmp_path):
    world = World(tmp_path / "unused")
    release, started = threading.Event(), threading.Event()

    @tool
    def slow(item: str) -> str:
        """Wait."""
        started.set()
        release.wait(20)
        return "ok"

    first = world.agent(
        script=[[{"name": "slow", "input": {"item": "x"}}], "Done."], tools=[slow], store=open_store(space.url)
    )
    worker = threading.Thread(target=first, args=("go",))
    worker.start()
    try:
        assert started.wait(20)
        second = world.agent(store=open_store(space.url))
        with pytest.raises(SessionInUse, match=r"in use by pid \d+ on host"):
            second("hello")
    finally:
        release.set()
        worker.join()
    state = open_store(space.url).load(SESSION)
    texts = [b.get("text") for m in state.conversations["default"].messages for b in m["content"]]
    assert "hello" not in texts, "the refused holder stored its prompt"
    assert texts[-1] == "Done."
