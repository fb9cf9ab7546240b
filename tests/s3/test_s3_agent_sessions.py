"""`DurableSessionManager` on `s3://`: a real strands.Agent's conversation committed to the local SeaweedFS, restored
exactly by a fresh agent on a fresh manager, and a second holder of the same session refused."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from strands import Agent, tool

from strands_durable.errors import SessionInUse
from strands_durable.history import normalize, validate
from strands_durable.sdk import DurableSessionManager
from strands_durable.store import open_store
from tests.sdk.support import PROMPTS, World

SESSION = "expenses-1"


def agent_on(world: World, manager: DurableSessionManager, *, script: list[Any] | None = None, tools=None) -> Any:
    return Agent(
        model=world.model(script),
        tools=tools if tools is not None else world.tools(),
        system_prompt="You record expenses.",
        callback_handler=None,
        session_manager=manager,
    )


@pytest.mark.parametrize("addressing", ["store=open_store", "STRANDS_SESSIONS_DIR"])
def test_a_fresh_agent_on_a_fresh_manager_restores_the_s3_session_exactly(
    s3_env, space, tmp_path, monkeypatch, addressing
):
    def manager() -> DurableSessionManager:
        if addressing == "STRANDS_SESSIONS_DIR":
            return DurableSessionManager(SESSION)
        return DurableSessionManager(SESSION, store=open_store(space.url))

    monkeypatch.setenv("STRANDS_SESSIONS_DIR", space.url if addressing == "STRANDS_SESSIONS_DIR" else "")
    world = World(tmp_path / "unused")
    agent = agent_on(world, manager())
    agent.state.set("currency", "EUR")
    results = [agent(prompt) for prompt in PROMPTS]
    effects, requests = len(world.effects), len(world.requests)

    again = agent_on(world, manager())
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

    first = agent_on(
        world,
        DurableSessionManager(SESSION, store=open_store(space.url)),
        script=[[{"name": "slow", "input": {"item": "x"}}], "Done."],
        tools=[slow],
    )
    worker = threading.Thread(target=first, args=("go",))
    worker.start()
    try:
        assert started.wait(20)
        second = agent_on(world, DurableSessionManager(SESSION, store=open_store(space.url)))
        with pytest.raises(SessionInUse, match=r"in use by pid \d+ on host"):
            second("hello")
    finally:
        release.set()
        worker.join()
    state = open_store(space.url).load(SESSION)
    texts = [b.get("text") for m in state.conversations["default"].messages for b in m["content"]]
    assert "hello" not in texts, "the refused holder stored its prompt"
    assert texts[-1] == "Done."
