"""`DurableSessionManager` on `s3://`: a real strands.Agent's conversation committed to the local SeaweedFS, restored
exactly by a fresh agent on a fresh manager, and a second holder of the same session refused."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from strands import tool

from strands_durable import S3Store
from strands_durable.errors import SessionChanged, SessionFenced, SessionInUse, SessionNotFound
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


def test_an_s3_session_deleted_between_prompts_stops_the_agent_instead_of_starting_over(s3_env, space, tmp_path):
    world = World(tmp_path / "unused")
    agent = world.agent(store=open_store(space.url))
    agent(PROMPTS[0])
    open_store(space.url).delete(SESSION)  # `strands sessions delete` while the agent waits for its next prompt
    requests = len(world.requests)
    with pytest.raises(SessionChanged, match="was deleted"):
        agent(PROMPTS[1])
    assert len(world.requests) == requests
    with pytest.raises(SessionNotFound):
        open_store(space.url).load(SESSION)


def test_an_s3_session_cannot_be_deleted_under_a_live_agent_and_a_lapsed_one_is_fenced_out(s3_env, space, tmp_path):
    """A delete needs the session's lease: refused while the agent's lease is live; once it lapsed (a paused
    process), the delete's fence refuses the agent's next commit, so no later tool runs."""
    world = World(tmp_path / "unused")
    opts = {"lease_ttl_s": 2.0, "lease_skew_s": 0.2}  # renewed every ttl/3: live on a loaded machine too
    outcomes: list[str] = []
    charged: list[float] = []

    @tool
    def pause(item: str) -> str:
        """Stand still for a while."""
        try:
            S3Store.from_url(space.url, **opts).delete(SESSION)
            outcomes.append("deleted while live")
        except SessionInUse:
            outcomes.append("refused while live")
        agent._session_manager._slots["default"].session._lease.stop_renewing()  # the process stops, unaware
        time.sleep(2.5)
        S3Store.from_url(space.url, **opts).delete(SESSION)
        outcomes.append("deleted after the lease lapsed")
        return "paused"

    @tool
    def charge(amount: float) -> str:
        """Charge the card."""
        charged.append(amount)
        return "charged"

    script = [[{"name": "pause", "input": {"item": "x"}}], [{"name": "charge", "input": {"amount": 5}}], "Done."]
    agent = world.agent(script=script, tools=[pause, charge], store=S3Store.from_url(space.url, **opts))
    with pytest.raises(Exception) as raised:
        agent("Pause, then charge.")
    assert outcomes == ["refused while live", "deleted after the lease lapsed"]
    seen: BaseException | None = raised.value
    while seen is not None and not isinstance(seen, SessionFenced):  # the SDK wraps what a hook raised
        seen = getattr(seen, "original_exception", None) or seen.__cause__
    assert isinstance(seen, SessionFenced), repr(raised.value)
    assert charged == [], "a tool ran after the session was deleted"
