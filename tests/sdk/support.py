"""A plain-Python expenses agent for the DurableSessionManager tests: the user's factory, a recording model,
tools that log what they did (and when) to a list, and an in-process crash at a named crash point."""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands import Agent, tool

from strands_durable import CrashPoints, InjectedCrash
from strands_durable.crashpoints import CrashPoint
from strands_durable.models.request import normalise_messages
from strands_durable.models.scripted import ScriptedModel
from strands_durable.models.wrapping import WrappedModel
from strands_durable.sdk import DurableSessionManager

SCRIPT: list[Any] = [
    [
        {"name": "add_expense", "input": {"item": "taxi", "amount": 12}},
        {"name": "add_expense", "input": {"item": "hotel", "amount": 140}},
    ],
    "Recorded the taxi and the hotel.",
    [{"name": "add_expense", "input": {"item": "dinner", "amount": 35}}],
    "Recorded the dinner.",
]
PROMPTS = ("Record the taxi and the hotel.", "Now the dinner.")


@dataclass
class World:
    """What the tools and the model saw, across every agent built on one sessions directory."""

    sessions: Path
    effects: list[dict[str, Any]] = field(default_factory=list)
    requests: list[list[dict[str, Any]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    tool_seconds: float = 0.02

    def model(self, script: list[Any] | None = None) -> Any:
        world = self

        class Recording(WrappedModel):
            async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kw: Any) -> Any:
                world.requests.append(normalise_messages(messages))
                async for event in super().stream(messages, tool_specs, system_prompt, **kw):
                    yield event

        return Recording(ScriptedModel(script or SCRIPT))

    def tools(self) -> list[Any]:
        world = self

        @tool(context=True)
        def add_expense(item: str, amount: float, tool_context: Any) -> str:
            """Record one expense."""
            start = time.monotonic()
            time.sleep(world.tool_seconds)
            with world.lock:
                world.effects.append(
                    {"id": tool_context.tool_use["toolUseId"], "item": item, "start": start, "end": time.monotonic()}
                )
            return f"recorded {item}: {amount}"

        return [add_expense]

    def agent(
        self,
        *,
        crash_at: str | None = None,
        kill_at: str | None = None,
        script: list[Any] | None = None,
        tools: list[Any] | None = None,
        **manager_options: Any,
    ) -> Any:
        crash = CrashPoints()
        if crash_at is not None:
            crash.subscribe(raise_at(crash_at))
        if kill_at is not None:
            crash.subscribe(sigkill_at(kill_at))
        where = {} if "store" in manager_options else {"storage_dir": self.sessions}
        manager = DurableSessionManager("expenses-1", crash_points=crash, **where, **manager_options)
        return Agent(
            model=self.model(script),
            tools=tools if tools is not None else self.tools(),
            system_prompt="You record expenses.",
            callback_handler=None,
            session_manager=manager,
        )


def raise_at(point_id: str) -> Any:
    def subscriber(point: CrashPoint) -> None:
        if point.id == point_id:
            raise InjectedCrash(point)

    return subscriber


def sigkill_at(point_id: str) -> Any:
    """A subscriber that kills this process (SIGKILL, no clean-up) at the crash point `point_id`."""

    def subscriber(point: CrashPoint) -> None:
        if point.id == point_id:
            os.kill(os.getpid(), signal.SIGKILL)

    return subscriber


def crash_run(agent: Any, prompt: str, **invocation: Any) -> None:
    """Invoke (with the given keyword arguments) and expect the injected crash (the SDK may wrap it)."""
    try:
        agent(prompt, **invocation)
    except BaseException as exc:
        seen: BaseException | None = exc
        while seen is not None and not isinstance(seen, InjectedCrash):
            seen = getattr(seen, "original_exception", None) or seen.__cause__
        assert seen is not None, f"expected an injected crash, got {exc!r}"
        return
    raise AssertionError("the crash point was never reached")
