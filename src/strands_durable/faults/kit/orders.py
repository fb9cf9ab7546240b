"""Completion orders of one agent turn's concurrent tools, chosen instead of left to timing.

Strands runs a turn's tools concurrently by default (`ConcurrentToolExecutor`); which result comes first is then
up to timing, so a crash point is explored in one interleaving only. `OrderGate` is a hook provider added after the
user's hooks: it wraps `BeforeToolCallEvent.selected_tool` (it sees the final tool), lets every tool start and
run, and holds each tool's final result until every tool before it in the chosen order has finished, its
`AfterToolCallEvent` run (the session manager's commits included). So results, after-hooks and commits follow
the order; a sync tool's effect, in its own thread, happens before the hold (an order orders results and commits,
not effects). A tool a hook cancels, or one a session manager answers from its record, never reaches the wrapper:
its `AfterToolCallEvent` counts it finished at once. The executor the user chose is kept: under any other
executor the gate holds nothing and the order is not reached.

With no order to hold, the gate only observes (`BatchLog`): each turn of two or more tools, its toolUseIds and
the order their results came in, and whether the agent's executor runs them concurrently.

`orders_to_explore` names the orders a policy explores for a turn of k tools: `golden` none but the golden run's
own, `default` one seeded other order, `all` every order up to k = `bound` (beyond it, as `default`).
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from math import factorial
from typing import Any

POLICIES = ("golden", "default", "all")
DEFAULT_BOUND = 3


@dataclass(frozen=True)
class ToolOrder:
    """Hold the results of the `batch`-th turn of two or more tools (counted from 0 over the run) in `order`:
    positions in the turn's toolUse order, the first released first."""

    batch: int
    order: tuple[int, ...]

    @property
    def label(self) -> str:
        return order_label(self.order)


def order_label(order: tuple[int, ...]) -> str:
    """How an item id names an order: `order[1,0,2]`."""
    return f"order[{','.join(map(str, order))}]"


@dataclass
class Batch:
    """One turn of two or more tools as a run saw it."""

    tool_use_ids: tuple[str, ...]  # in toolUse order
    completed: list[str] = field(default_factory=list)  # toolUseIds in the order their results came

    @property
    def completion_order(self) -> tuple[int, ...]:
        return tuple(self.tool_use_ids.index(i) for i in self.completed if i in self.tool_use_ids)


@dataclass
class BatchLog:
    """What a gate saw in one run: the turns of several tools, whether the executor runs them concurrently, and,
    when it held an order, whether every tool of that turn came out in it (`reached`)."""

    batches: list[Batch] = field(default_factory=list)
    concurrent: bool = False
    reached: bool = False
    timed_out: bool = False

    def batch_of(self, tool_use_ids: tuple[str, ...]) -> int:
        for index, batch in enumerate(self.batches):
            if batch.tool_use_ids == tool_use_ids:
                return index
        self.batches.append(Batch(tool_use_ids))
        return len(self.batches) - 1


def orders_to_explore(
    k: int, golden: tuple[int, ...], policy: str, *, seed: int = 0, batch: int = 0, bound: int = DEFAULT_BOUND
) -> list[tuple[int, ...]]:
    """The orders other than the golden run's own (`golden`) to explore for a turn of `k` tools."""
    if policy not in POLICIES:
        raise ValueError(f"unknown order policy {policy!r}; choose from {', '.join(POLICIES)}")
    if policy == "golden" or k < 2:
        return []
    others = [p for p in itertools.permutations(range(k)) if p != golden] if k <= max(bound, 2) else None
    if policy == "all" and others is not None:
        return others
    rng = random.Random(f"{seed}:{batch}:{k}")  # the same choice in every process
    if others is not None:
        return [rng.choice(others)]
    while True:  # too many to list: draw one that is not the golden order
        drawn = tuple(rng.sample(range(k), k))
        if drawn != golden:
            return [drawn]


def possible_orders(k: int) -> int:
    return factorial(k)


class OrderGate:
    """The hook provider of one run: observes every turn of several tools and, given a `ToolOrder`, holds that
    turn's results in it. `stopped()` says the run has crashed (holders then let go at once: nothing after a
    crash commits anyway); a hold longer than `timeout` seconds lets go and records `timed_out`."""

    def __init__(
        self, order: ToolOrder | None, log: BatchLog, *, stopped: Callable[[], bool], timeout: float = 30.0
    ) -> None:
        self.order = order
        self.log = log
        self.stopped = stopped
        self.timeout = timeout
        self._lock = threading.Lock()
        self._done: set[int] = set()  # positions of the held turn whose AfterToolCallEvent has run
        self._arrived: set[int] = set()

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        from strands.hooks import AfterToolCallEvent, BeforeToolCallEvent
        from strands.hooks.registry import HookOrder

        registry.add_callback(BeforeToolCallEvent, self._before, order=HookOrder.SDK_LAST)
        registry.add_callback(AfterToolCallEvent, self._after, order=HookOrder.SDK_LAST)

    # -- the hooks --
    def _turn(self, event: Any) -> tuple[int, int] | None:
        """(batch index, position) of the event's call when it belongs to a turn of several tools."""
        from strands.tools.executors import ConcurrentToolExecutor

        messages = getattr(event.agent, "messages", None) or []
        last = messages[-1] if messages else {}
        ids = tuple(b["toolUse"]["toolUseId"] for b in last.get("content", ()) if "toolUse" in b)
        tool_use_id = event.tool_use.get("toolUseId")
        if len(ids) < 2 or tool_use_id not in ids:
            return None
        with self._lock:
            self.log.concurrent = isinstance(getattr(event.agent, "tool_executor", None), ConcurrentToolExecutor)
            return self.log.batch_of(ids), ids.index(tool_use_id)

    def _held(self, turn: tuple[int, int] | None) -> bool:
        return turn is not None and self.order is not None and turn[0] == self.order.batch and self.log.concurrent

    def _before(self, event: Any) -> None:
        turn = self._turn(event)
        if not self._held(turn) or event.cancel_tool or event.selected_tool is None:
            return
        assert turn is not None
        with self._lock:
            self._arrived.add(turn[1])
        event.selected_tool = _held_tool(event.selected_tool, self, turn[1])

    def _after(self, event: Any) -> None:
        turn = self._turn(event)
        if turn is None:
            return
        batch = self.log.batches[turn[0]]
        with self._lock:
            batch.completed.append(event.tool_use.get("toolUseId"))
            if self._held(turn):
                self._done.add(turn[1])
                assert self.order is not None
                if len(self._done) == len(self.order.order) and not self.log.timed_out:
                    self.log.reached = batch.completion_order == self.order.order

    # -- the hold --
    def _earlier_done(self, position: int) -> bool:
        assert self.order is not None
        earlier = self.order.order[: self.order.order.index(position)]
        with self._lock:
            return all(p in self._done for p in earlier)

    async def wait_turn(self, position: int) -> None:
        """Until every tool before `position` in the order has finished (or the run crashed, or the timeout)."""
        deadline = time.monotonic() + self.timeout
        while not self._earlier_done(position):
            if self.stopped():
                return
            if time.monotonic() > deadline:
                self.log.timed_out = True
                return
            await asyncio.sleep(0.002)


def _held_tool(tool: Any, gate: OrderGate, position: int) -> Any:
    """A shallow copy of the user's final tool (its type and marks kept) whose last event, the result, is held
    until the gate lets it go."""
    held = copy.copy(tool)
    inner = tool.stream

    async def stream(tool_use: Any, invocation_state: Any, **kwargs: Any) -> Any:
        last = None
        async for event in inner(tool_use, invocation_state, **kwargs):
            if last is not None:
                yield last
            last = event
        await gate.wait_turn(position)
        if last is not None:
            yield last

    held.stream = stream
    return held
