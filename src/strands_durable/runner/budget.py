"""`runtime.budgets`: token, step and duration limits, checked before every unit and every model call.

Tokens are the session's committed tokens, so the budget holds across resumes; the warning comes once per run
when usage reaches `warn_threshold`. A step is a unit of work (an agent invocation or a human answer); the
session's committed units count, so `max_steps` also holds across resumes. `max_duration_s` bounds the wall
time of one run (one `strands run` or one resume). Every overrun is `BudgetExceeded` (exit 20).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from strands_durable.errors import BudgetExceeded
from strands_durable.runner.reporter import Reporter
from strands_durable.store.base import Session


class Budget:
    def __init__(self, budgets: Any, session: Session, reporter: Reporter, *, clock=time.monotonic) -> None:
        self.max_tokens = getattr(budgets, "max_tokens", None)
        self.max_steps = getattr(budgets, "max_steps", None)
        self.max_duration_s = getattr(budgets, "max_duration_s", None)
        self.warn_threshold = getattr(budgets, "warn_threshold", 0.8)
        self.session = session
        self.reporter = reporter
        self.clock = clock
        self.started = clock()
        self._warned = False
        self._in_flight: set[str] = set()
        self._lock = threading.Lock()

    def tokens_used(self) -> int:
        return int(self.session.state.usage()["total"])

    def steps_used(self) -> int:
        return sum(1 for record in self.session.state.units.values() if record.get("status") == "completed")

    def before_model_call(self) -> None:
        self._check_duration()
        if self.max_tokens is None:
            return
        used = self.tokens_used()
        if used >= self.max_tokens:
            raise BudgetExceeded(
                f"token budget exceeded: {used} tokens used of runtime.budgets.max_tokens={self.max_tokens}"
            )
        with self._lock:
            warn = not self._warned and used >= self.warn_threshold * self.max_tokens
            self._warned = self._warned or warn
        if warn:
            percent = round(100 * used / self.max_tokens)
            self.reporter.warning(
                f"Token budget warning: {used} of {self.max_tokens} tokens used ({percent}%, "
                f"warn_threshold {self.warn_threshold})"
            )

    def before_unit(self, unit: str) -> None:
        """Before an agent unit starts; units started in this run count until they are committed."""
        self._check_duration()
        if self.max_steps is None:
            return
        with self._lock:
            started = self.steps_used() + len(self._in_flight - set(self.session.state.units))
            if unit not in self._in_flight and started >= self.max_steps:
                raise BudgetExceeded(
                    f"step budget exceeded: {started} units of work done or running, "
                    f"runtime.budgets.max_steps={self.max_steps} (next: {unit})"
                )
            self._in_flight.add(unit)

    def _check_duration(self) -> None:
        if self.max_duration_s is None:
            return
        elapsed = self.clock() - self.started
        if elapsed >= self.max_duration_s:
            raise BudgetExceeded(
                f"time budget exceeded: this run has taken {elapsed:.3f}s, "
                f"runtime.budgets.max_duration_s={self.max_duration_s}"
            )
