"""Crash points: typed events the core emits at every boundary where a run can die.

Subscribers (the chaos plugin, the kill harness, users) observe each `CrashPoint` and may raise, for example
`InjectedCrash`, a BaseException that user code's `except Exception` cannot swallow. Nothing is monkeypatched:
the runner, the durable agent and the store call `CrashPoints.emit` at the sites listed in `SITES`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# site -> where it is emitted
SITES: dict[str, str] = {
    "unit.before": "before a unit of work (step, task, branch, node, iteration, worker, router) starts",
    "unit.after": "after a unit's outcome is committed",
    "model.before": "before each model call (after request validation)",
    "model.answered": "after the model answered, before the assistant message is committed",
    "tool.before": "before a tool executes",
    "tool.executed": "after a tool ran, before its result is committed",
    "tool.committed": "after a tool's result is committed",
    "store.before_commit": "before a commit record is written",
    "store.after_commit": "after a commit record is durable",
}


@dataclass(frozen=True)
class CrashPoint:
    """One boundary of one run. `path` locates it in the workflow; `occurrence` disambiguates repeats."""

    site: str
    path: str  # e.g. "step[1]:analyst/turn[0]/tool[1]:calculator"
    occurrence: int = 0

    @property
    def id(self) -> str:
        base = f"{self.path}/{self.site}" if self.path else self.site
        return base if self.occurrence == 0 else f"{base}#{self.occurrence}"


def natural_key(text: str) -> list[Any]:
    """Sort key of a crash-point id or path in workflow order (`step[10]` after `step[9]`)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


class InjectedCrash(BaseException):
    """An in-process crash injected at a crash point; not an Exception, so `except Exception` lets it pass."""

    def __init__(self, point: CrashPoint) -> None:
        super().__init__(f"injected crash at {point.id}")
        self.point = point


Subscriber = Callable[[CrashPoint], None]


class CrashPoints:
    """The crash-point bus of one run: counts occurrences so ids are stable across runs, calls subscribers."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._seen: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.remove(subscriber)

    def emit(self, site: str, path: str = "") -> None:
        if site not in SITES:
            raise ValueError(f"unknown crash-point site {site!r}")
        with self._lock:
            key = (site, path)
            occurrence = self._seen.get(key, 0)
            self._seen[key] = occurrence + 1
        if not self._subscribers:
            return
        point = CrashPoint(site, path, occurrence)
        for subscriber in list(self._subscribers):
            subscriber(point)
