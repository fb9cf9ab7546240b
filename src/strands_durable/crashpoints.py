"""Crash points: typed events the core emits at every boundary where a run can die.

Each site has one event type: `UnitBoundary` (a unit starts or is committed), `ModelCall` (before a model call,
after its answer), `ToolCall` (before a tool runs, after it ran, after its result is committed) and `Commit`
(around every commit record). All are `CrashPoint`s with a `site`, a `path` locating them in the workflow, an
`occurrence` and a stable `id`. Subscribers (the chaos plugin, the fault harnesses, users) observe them with
`CrashPoints.subscribe` and may raise, for example `InjectedCrash`. Nothing is monkeypatched: the runner, the
durable agent and the store call `CrashPoints.emit` at the sites listed in `SITES`.

A crash is final: once a subscriber raised `InjectedCrash`, every later emission of that bus raises it again. An
executor that swallows the exception where it was raised (the SDK's concurrent tool executor catches only
`Exception` in its tool tasks and drops the rest) therefore cannot let the run go on: the next commit, model call
or tool start of the dead run raises it, and `raise_if_crashed` lets a run's entry point check at the end.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

from strands_durable.readonly import readonly

ToolKey = tuple[str, str]
"""A tool call in a session: (conversation key, toolUseId), the key the durable agent commits its result under."""
Place = tuple[tuple[str, int], ...]
"""Where a point stands below its unit's outermost segment: (name, index) pairs, e.g. (("step", 1), ("turn", 0))."""


@dataclass(frozen=True)
class CrashPoint:
    """One boundary of one run. `path` locates it in the workflow; `occurrence` disambiguates repeats."""

    site: str
    path: str  # e.g. "step[1]:analyst/turn[0]/tool[1]:calculator"
    occurrence: int = 0
    place: Place = field(default=(), kw_only=True, compare=False)

    @property
    def id(self) -> str:
        base = f"{self.path}/{self.site}" if self.path else self.site
        return base if self.occurrence == 0 else f"{base}#{self.occurrence}"


@dataclass(frozen=True, kw_only=True)
class UnitBoundary(CrashPoint):
    """`unit.before` (a unit of work starts) and `unit.after` (its outcome is committed)."""

    unit: str = field(default="", compare=False)  # the unit id, e.g. "step[1]", "branch:web/step[0]"


@dataclass(frozen=True, kw_only=True)
class ModelCall(CrashPoint):
    """`model.before` (a validated request is about to be sent) and `model.answered` (before the answer is
    committed)."""

    agent: str = field(default="", compare=False)
    conversation: str = field(default="", compare=False)
    turn: int = field(default=0, compare=False)


@dataclass(frozen=True, kw_only=True)
class ToolCall(CrashPoint):
    """`tool.before`, `tool.executed` (ran, result not committed) and `tool.committed`."""

    name: str = field(default="", compare=False)
    tool_use_id: str = field(default="", compare=False)
    conversation: str = field(default="", compare=False)
    non_idempotent: bool = field(default=False, compare=False)
    turn: int = field(default=0, compare=False)
    index: int = field(default=0, compare=False)  # the toolUse block's place in its assistant message

    @property
    def key(self) -> ToolKey:
        return (self.conversation, self.tool_use_id)


@dataclass(frozen=True, kw_only=True)
class Commit(CrashPoint):
    """`store.before_commit` and `store.after_commit` (the record is written; durable when `durable`).

    `records` are the commit's events and `state` the session state (after the commit at `store.after_commit`),
    both read-only at every depth and live: valid during the callback, never copied (`copy.deepcopy` them to
    keep one)."""

    durable: bool = field(default=True, compare=False)
    synced: bool = field(default=False, compare=False)
    records: Sequence[Mapping[str, Any]] = field(default=(), compare=False)
    state: Any = field(default=None, compare=False)
    seq: int = field(default=0, compare=False)  # the commit's own seq at `store.after_commit` (another thread's
    # commit may already have moved `state.seq` past it); 0 at `store.before_commit`

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", readonly(self.records))
        if self.state is not None:
            object.__setattr__(self, "state", readonly(self.state))

    @property
    def kinds(self) -> tuple[str, ...]:
        """The record kinds of this commit, in order (`message`, `tool_started`, `tool_result`, `unit`, ...)."""
        return tuple(str(record.get("type")) for record in self.records)

    @property
    def tool_results(self) -> tuple[ToolKey, ...]:
        """The tool calls whose result this commit records (a `tool_result` record or a results message)."""
        return tool_result_keys(self.records)


def tool_result_keys(records: Sequence[Mapping[str, Any]]) -> tuple[ToolKey, ...]:
    """The tool calls whose result `records` (a commit's events) record."""
    keys: list[ToolKey] = []
    for record in records:
        if record.get("type") == "tool_result":
            keys.append((str(record["conv"]), str(record["result"]["toolUseId"])))
        elif record.get("type") == "message":
            blocks = record["message"].get("content", ())
            keys += [(str(record["conv"]), str(b["toolResult"]["toolUseId"])) for b in blocks if "toolResult" in b]
    return tuple(keys)


@dataclass(frozen=True)
class Durable:
    """Not a crash point (a crash here is a crash at the point that follows at once): a barrier returned, so the
    deferred commits of the session up to `seq` are durable and promised to their callers from now on (a
    deferred commit's `store.after_commit` says `durable=False`). `tool_results`: the tool calls whose results
    those commits hold. Delivered by `CrashPoints.notify` to subscribers of this type only."""

    seq: int
    tool_results: tuple[ToolKey, ...] = ()


# site -> (event type, where it is emitted)
_SITES: dict[str, tuple[type[CrashPoint], str]] = {
    "unit.before": (UnitBoundary, "before a unit of work (step, task, branch, node, iteration, worker, router) starts"),
    "unit.after": (UnitBoundary, "after a unit's outcome is committed"),
    "model.before": (ModelCall, "before each model call (after request validation)"),
    "model.answered": (ModelCall, "after the model answered, before the assistant message is committed"),
    "tool.before": (ToolCall, "before a tool executes"),
    "tool.executed": (ToolCall, "after a tool ran, before its result is committed"),
    "tool.committed": (ToolCall, "after a tool's result is committed"),
    "store.before_commit": (Commit, "before a commit record is written"),
    "store.after_commit": (Commit, "after a commit record is written (durable, unless deferred: see Durable)"),
}
SITES: dict[str, str] = {site: where for site, (_, where) in _SITES.items()}
SITE_TYPES: dict[str, type[CrashPoint]] = {site: kind for site, (kind, _) in _SITES.items()}


def natural_key(text: str) -> list[Any]:
    """Sort key of a crash-point id or path in workflow order (`step[10]` after `step[9]`)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


class InjectedCrash(BaseException):
    """An in-process crash injected at a crash point.

    A BaseException, so `except Exception` (user code, the SDK's tool error handling) lets it pass; neither a
    KeyboardInterrupt nor a SystemExit, so pytest fails only the test it escapes from and no face takes it for
    Ctrl+C. Where an executor drops it anyway, the bus raises it again at the run's next crash point."""

    def __init__(self, point: CrashPoint) -> None:
        super().__init__(f"injected crash at {point.id}")
        self.point = point


Subscriber = Callable[[Any], None]
E = TypeVar("E", bound=CrashPoint)


class CrashPoints:
    """The crash-point bus of one run: counts occurrences so ids are stable across runs, calls subscribers."""

    def __init__(self) -> None:
        self._subscribers: list[tuple[type[CrashPoint], Subscriber]] = []
        self._seen: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        self._on_crash: list[Callable[[], None]] = []
        self.crashed: InjectedCrash | None = None

    @overload
    def subscribe(self, event_type: type[E], callback: Callable[[E], None]) -> None: ...
    @overload
    def subscribe(self, event_type: type[Durable], callback: Callable[[Durable], None]) -> None: ...
    @overload
    def subscribe(self, event_type: Callable[[CrashPoint], None]) -> None: ...

    def subscribe(self, event_type: Any, callback: Any = None) -> None:
        """`subscribe(ToolCall, callback)` for one event type, `subscribe(callback)` for every crash point."""
        if callback is None:
            event_type, callback = CrashPoint, event_type
        self._subscribers.append((event_type, callback))

    def unsubscribe(self, callback: Subscriber) -> None:
        for entry in self._subscribers:
            if entry[1] == callback:
                self._subscribers.remove(entry)
                return
        raise ValueError("not subscribed")

    def emit(self, site: str, path: str = "", **fields: Any) -> None:
        """Emit the crash point `site` at `path`; `fields` are those of the site's event type."""
        kind = SITE_TYPES.get(site)
        if kind is None:
            raise ValueError(f"unknown crash-point site {site!r}")
        with self._lock:
            key = (site, path)
            occurrence = self._seen.get(key, 0)
            self._seen[key] = occurrence + 1
        if self.crashed is not None:
            raise _again(self.crashed)
        if not self._subscribers:
            return
        point = kind(site, path, occurrence, **fields)
        try:
            for event_type, callback in list(self._subscribers):
                if isinstance(point, event_type):
                    callback(point)
        except InjectedCrash as crash:
            self.crashed = crash
            for halt in list(self._on_crash):
                halt()
            raise

    def on_crash(self, halt: Callable[[], None]) -> None:
        """Call `halt` (quick, never raising) when a crash is injected: what a dead process would no longer do,
        such as a background writer's run waiting for its interval, stops there."""
        self._on_crash.append(halt)

    def notify(self, event: Durable) -> None:
        """Deliver an event that is not a crash point (never counted, never crashed at) to its subscribers."""
        for event_type, callback in list(self._subscribers):
            if isinstance(event, event_type):
                callback(event)

    def close(self) -> None:
        """The run is over: let go of the subscribers and crash callbacks (they hold what the run observed) and of
        the frames the injected crash unwound (its traceback held them, and they held this bus); the crash itself
        stays."""
        self._subscribers = []
        self._on_crash = []
        if self.crashed is not None:
            self.crashed.__traceback__ = self.crashed.__context__ = None

    def raise_if_crashed(self) -> None:
        """Raise the crash injected into this run, if any (for entry points whose executors may have dropped it)."""
        if self.crashed is not None:
            raise _again(self.crashed)


def _again(crash: InjectedCrash) -> InjectedCrash:
    """The crash raised anew (same type and point, caused by the first): a dead run's other threads each raise
    their own instance, so whoever catches the injected type (a harness's subclass) catches every one of them."""
    again = type(crash).__new__(type(crash), *crash.args)
    again.args = crash.args
    again.point = crash.point
    again.__cause__ = crash
    return again
