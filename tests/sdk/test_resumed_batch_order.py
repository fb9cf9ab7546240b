"""A resumed turn's tool results are in toolUse order, whatever order its concurrent tools finished in: the turn is
crashed right after the first finisher's result was committed, resumed with `agent()`, and both completion orders
give byte-identical requests and histories, equal to the uninterrupted run's (so a cassette keyed on the request
replays either)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from strands import tool

from strands_durable import InjectedCrash
from strands_durable.models.request import normalise_messages
from tests.sdk.support import PROMPTS, World


def ordered_tools(world: World, finishing_first: str) -> list[Any]:
    """`add_expense` whose call for `finishing_first` ends before the other call of the batch ends (the other waits
    for it, in its own thread of the SDK's concurrent executor)."""
    first_done = threading.Event()

    @tool
    def add_expense(item: str, amount: float) -> str:
        """Record one expense."""
        if item != finishing_first:
            first_done.wait(timeout=10)
        with world.lock:
            world.effects.append({"item": item})
        if item == finishing_first:
            first_done.set()
        return f"recorded {item}: {amount}"

    return [add_expense]


def crashed_and_resumed(root: Path, finishing_first: str) -> tuple[World, list[Any]]:
    world = World(root)
    index = {"taxi": 0, "hotel": 1}[finishing_first]
    point = f"default/inv[0]/turn[0]/tool[{index}]:add_expense/result/store.after_commit"
    crashing = world.agent(tools=ordered_tools(world, finishing_first))
    fired: list[str] = []

    def crash(reached: Any) -> None:
        if reached.id == point:
            fired.append(reached.id)
            raise InjectedCrash(reached)

    crashing._session_manager.crash_points.subscribe(crash)
    with pytest.raises(BaseException):  # noqa: B017 -- the crash, however the SDK's concurrent executor wraps it
        crashing(PROMPTS[0])
    assert fired == [point]
    assert [e["item"] for e in world.effects][:1] == [finishing_first]
    world.requests.clear()
    resumed = world.agent(tools=ordered_tools(world, finishing_first))
    resumed()  # finishes the pending invocation: the committed result replayed, the other call run again
    return world, normalise_messages(resumed.messages)


@pytest.mark.parametrize("finishing_first", ["taxi", "hotel"])
def test_a_resumed_batch_stores_its_results_in_tool_use_order(tmp_path: Path, finishing_first: str) -> None:
    world, history = crashed_and_resumed(tmp_path / "sessions", finishing_first)
    results = [b["toolResult"]["content"][0]["text"] for b in history[2]["content"] if "toolResult" in b]
    assert results == ["recorded taxi: 12.0", "recorded hotel: 140.0"]
    uses = [b["toolUse"]["toolUseId"] for b in history[1]["content"] if "toolUse" in b]
    assert [b["toolResult"]["toolUseId"] for b in history[2]["content"] if "toolResult" in b] == uses
    assert len(world.requests) == 1  # the request after the batch, and only it


def test_every_completion_order_gives_byte_identical_requests_and_histories(tmp_path: Path) -> None:
    seen = {}
    for first in ("taxi", "hotel"):
        world, history = crashed_and_resumed(tmp_path / first, first)
        seen[first] = (json.dumps(world.requests, sort_keys=True), json.dumps(history, sort_keys=True))
    uninterrupted = World(tmp_path / "golden")
    agent = uninterrupted.agent(tools=ordered_tools(uninterrupted, "hotel"))
    agent(PROMPTS[0])
    golden_request = json.dumps(uninterrupted.requests[1:], sort_keys=True)
    assert seen["taxi"] == seen["hotel"]
    assert seen["taxi"][0] == golden_request
    assert seen["taxi"][1] == json.dumps(normalise_messages(agent.messages), sort_keys=True)
