"""`agent.state` changes belong to the tool whose task made them: committed with that tool's result, never with a
sibling's that finished first. A kill at any SDK hook or store commit of a trip booking (concurrent tools that
change `agent.state`, then a second prompt) leaves `agent.state`, once the conversation is finished, equal to the
uninterrupted run's."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from strands import hooks, tool
from strands.hooks import AfterToolCallEvent, HookProvider

from strands_durable import CrashPoints, LocalStore
from strands_durable.faults.kit.forking import fork_child, wait_child
from strands_durable.sdk import DurableSessionManager

from .support import World

SCRIPT: list[Any] = [
    [
        {"name": "hold_seat", "input": {"flight": "LH1"}},
        {"name": "charge_card", "input": {"amount": 90}},
    ],
    "Held and charged.",
    [{"name": "send_receipt", "input": {"to": "me"}}],
    "Receipt sent.",
]
PROMPTS = ("Book LH1.", "Send the receipt.")
SDK_EVENTS = [
    getattr(hooks, f"{when}{what}Event")
    for what in ("Invocation", "ModelCall", "ToolCall")
    for when in ("Before", "After")
] + [hooks.MessageAddedEvent]


def _tools(slow_s: float) -> list[Any]:
    """Three tools that each change their own part of `agent.state`; `hold_seat` changes it, then works a while,
    so `charge_card` (same batch) finishes and commits first."""

    def bump(state: Any, key: str, by: float) -> None:
        state.set(key, (state.get(key) or 0) + by)

    @tool(context=True)
    def hold_seat(flight: str, tool_context: Any) -> str:
        """Hold a seat."""
        bump(tool_context.agent.state, "seats", 1)
        time.sleep(slow_s)
        return f"held {flight}"

    @tool(context=True)
    def charge_card(amount: float, tool_context: Any) -> str:
        """Charge the card."""
        bump(tool_context.agent.state, "charged", amount)
        return f"charged {amount}"

    @tool(context=True)
    def send_receipt(to: str, tool_context: Any) -> str:
        """Send the receipt."""
        bump(tool_context.agent.state, "receipts", 1)
        return f"sent to {to}"

    return [hold_seat, charge_card, send_receipt]


class KillAt(HookProvider):
    """SIGKILL this process at the `at`-th SDK hook event or store commit point (counted together, in order)."""

    def __init__(self, at: int, seen: list[str]) -> None:
        self.at, self.seen = at, seen

    def point(self, name: str) -> None:
        self.seen.append(name)
        if len(self.seen) == self.at:
            _kill_now()

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        for event_type in SDK_EVENTS:
            registry.add_callback(event_type, lambda e, t=event_type: self.point(f"hook:{t.__name__}"))


def _agent(world: World, *, kill_at: int = 0, seen: list[str] | None = None, slow_s: float = 0.3) -> Any:
    crash = CrashPoints()
    killer = KillAt(kill_at, seen if seen is not None else [])
    crash.subscribe(lambda point: point.id.endswith("commit") and killer.point(point.id))
    manager = DurableSessionManager("trip", world.sessions, crash_points=crash)
    from strands import Agent

    agent = Agent(
        model=world.model(SCRIPT),
        tools=_tools(slow_s),
        callback_handler=None,
        session_manager=manager,
    )
    agent.hooks.add_hook(killer)
    return agent


def _finish(world: World) -> Any:
    """A fresh process's way on: finish what is pending (`agent()`), then send the prompts not yet sent."""
    agent = _agent(world)
    if agent._session_manager.pending_prompt() is not None:
        agent()
    sent = sum(1 for m in agent.messages if m["role"] == "user" and any("text" in b for b in m["content"]))
    for prompt in PROMPTS[sent:]:
        agent(prompt)
    return agent


def _outcome_unknown(world: World) -> bool:
    conv = LocalStore(world.sessions).load("trip").conversations["default"]
    return "outcome unknown" in str(conv.messages)


def test_a_tools_state_change_is_committed_with_its_own_result_not_a_siblings(tmp_path):
    world = World(tmp_path / "sessions")
    golden = _agent(world, slow_s=0.3)
    for prompt in PROMPTS:
        golden(prompt)
    assert golden.state.get() == {"seats": 1, "charged": 90, "receipts": 1}

    again = World(tmp_path / "again")

    def run() -> int:  # killed in the user's hook on charge_card's end, while hold_seat is still at work
        agent = _agent(again)
        agent.hooks.add_callback(AfterToolCallEvent, lambda e: e.tool_use["name"] == "charge_card" and _kill_now())
        agent(PROMPTS[0])
        return 0

    assert wait_child(fork_child(run)).signal == signal.SIGKILL
    stored = LocalStore(again.sessions).load("trip").conversations["default"]
    assert stored.agent_state == {"charged": 90}, "hold_seat's change was committed with charge_card's result"
    assert _finish(again).state.get() == golden.state.get()


def _kill_now() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_after_a_kill_at_any_hook_or_commit_the_state_equals_the_uninterrupted_runs(tmp_path):
    slow_s = 0.2
    golden_world = World(tmp_path / "golden")
    points: list[str] = []
    golden = _agent(golden_world, seen=points, slow_s=slow_s)
    for prompt in PROMPTS:
        golden(prompt)
    expected = golden.state.get()
    assert len(points) > 40, points
    differing = []
    for at in range(1, len(points) + 1):
        world = World(tmp_path / f"k{at}")

        def run(world: World = world, at: int = at) -> int:
            agent = _agent(world, kill_at=at, slow_s=slow_s)
            for prompt in PROMPTS:
                agent(prompt)
            return 0

        ended = wait_child(fork_child(run))
        assert ended.signal == signal.SIGKILL, f"point {at} ({points[at - 1]}) was not reached"
        finished = _finish(world)
        if finished.state.get() != expected and not _outcome_unknown(world):
            differing.append((at, points[at - 1], finished.state.get()))
        stored = LocalStore(world.sessions).load("trip").conversations["default"].agent_state
        assert stored == finished.state.get(), f"point {at}: the stored state differs from the agent's"
    assert differing == [], differing
