"""What `strands run` prints as it goes: the user's document's lines, plain or as a live display on a terminal.

`LineReporter` writes one line per event (pipes, logs, `--json` where the lines go to stderr); `LiveReporter`
shows the executing units with a spinner and prints each finished line above it. Both are `Reporter`s the
runner calls; calls may come from several threads (concurrent units).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any, TextIO

from strands_durable.cli.closed_stdout import silence_closed_stream
from strands_durable.runner.reporter import Reporter
from strands_durable.wording import counted

_ROUND_UNIT = re.compile(r"round\[(\d+)\]:(orchestrator|decomposition_review|worker\[\d+\])$")


_ROLES = {"router": "Router", "router.review": "Review of the route", "reduce_review": "Review of the reduction"}


def role_name(index: int, total: int | None, unit: str) -> str | None:
    """The name of a unit that is not a numbered step, by its role: orchestrator_workers' `Planner (round 1)`,
    `Worker 2/3 (round 1)`, `Reducer`, `Writer`; routing's `Router` (strands-cli numbers only the route's steps)."""
    role = _round_role(unit, index, total)
    if role is not None:
        return role
    if unit in ("reduce", "writeup") and total is None:
        return "Reducer" if unit == "reduce" else "Writer"
    return _ROLES.get(unit)


def step_name(index: int, total: int | None, unit: str = "") -> str:
    """`Step 2/3` (counted from 1, as the user's document shows it), or the unit's role (`role_name`)."""
    role = role_name(index, total, unit)
    if role is not None:
        return role
    return f"Step {index + 1}/{total}" if total else f"Step {index + 1}"


def _round_role(unit: str, index: int, total: int | None) -> str | None:
    match = _ROUND_UNIT.match(unit)
    if match is None:
        return None
    round_number, kind = int(match[1]) + 1, match[2]
    if kind == "orchestrator":
        return f"Planner (round {round_number})"
    if kind == "decomposition_review":
        return f"Review of the plan (round {round_number})"
    return f"Worker {index + 1}/{total} (round {round_number})" if total else f"Worker {index + 1}"


def executing_line(index: int, total: int | None, label: str, unit: str = "") -> str:
    return f"{step_name(index, total, unit)}: {label} - EXECUTING"


def complete_line(index: int, total: int | None, label: str, tokens: int, unit: str = "") -> str:
    return f"{step_name(index, total, unit)}: {label} - COMPLETE ({counted(tokens, 'token')})"


def total_tokens_line(tokens_before: int, tokens_total: int, *, resumed: bool) -> str:
    if not resumed:
        return f"Total tokens: {tokens_total}"
    return f"Total tokens: {tokens_total} ({tokens_before} from resumed session + {tokens_total - tokens_before} new)"


class LineReporter(Reporter):
    """Plain lines: progress on `out`, warnings on `err`.

    When `out`'s reader goes away (`strands run spec | head -1`), `on_output_closed` is called once (the run
    stops as on SIGTERM) and later lines are dropped.
    """

    def __init__(self, out: TextIO, err: TextIO, *, on_output_closed: Callable[[], None] | None = None) -> None:
        self.out = out
        self.err = err
        self.session_id: str | None = None
        self.workflow: str | None = None
        self.resumed = False
        self.status: str | None = None
        self.on_output_closed = on_output_closed
        self.output_closed = False
        self._lock = threading.RLock()

    # -- printing -------------------------------------------------------------------------------------
    def line(self, text: str) -> None:
        with self._lock:
            if self.output_closed:
                return
            try:
                print(text, file=self.out, flush=True)
            except BrokenPipeError:
                self._closed()

    def warn(self, text: str) -> None:
        with self._lock:
            print(text, file=self.err, flush=True)

    def notice(self, text: str) -> None:
        """A message about the run itself (a signal received) on stderr, as a line of its own."""
        self.warn(text)

    def close(self) -> None:
        """End any live display (called once the run returns or raises)."""

    def abort_text(self) -> str:
        """What to write before the process ends at once (a second Ctrl+C): nothing for plain lines."""
        return ""

    def _closed(self) -> None:
        self.output_closed = True
        silence_closed_stream(self.out)
        if self.on_output_closed is not None:
            self.on_output_closed()

    # -- the Reporter interface -----------------------------------------------------------------------
    def session_started(self, session_id: str, workflow: str, *, resumed: bool) -> None:
        self.session_id, self.workflow, self.resumed = session_id, workflow, resumed
        if not resumed:
            self.line(f"Session ID: {session_id}")
        self.line(f"Running workflow: {workflow}")

    def warning(self, text: str) -> None:
        for part in text.splitlines():
            self.warn(part)

    def unit_skipped(self, index: int, label: str, unit: str, *, total: int | None = None) -> None:
        role = role_name(index, total, unit)
        self.line(f"Skipping completed {role}: {label}" if role else f"Skipping completed step {index}: {label}")

    def unit_started(self, index: int, total: int | None, label: str, unit: str) -> None:
        with self._lock:
            if self.resumed and role_name(index, total, unit) is None:  # a role's EXECUTING line names it
                self.line(f"Executing step {index}: {label}")
            self.line(executing_line(index, total, label, unit))

    def unit_completed(self, index: int, total: int | None, label: str, unit: str, tokens: int) -> None:
        self.line(complete_line(index, total, label, tokens, unit))

    def finished(self, status: str, tokens_before: int, tokens_total: int) -> None:
        self.status = status
        with self._lock:
            self.close()
            if status == "completed":
                self.line("✓ Workflow complete")
            self.line(total_tokens_line(tokens_before, tokens_total, resumed=self.resumed))


class LiveReporter(LineReporter):
    """On a terminal: executing units spin below the finished lines, which stay on screen."""

    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        *,
        console: Any = None,
        on_output_closed: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(out, err, on_output_closed=on_output_closed)
        from rich.console import Console

        self.console = console or Console(file=out, highlight=False)
        self._running: dict[str, str] = {}  # unit id -> its EXECUTING text
        self._live: Any = None

    def line(self, text: str) -> None:
        from rich.text import Text

        with self._lock:
            self.console.print(Text(text))

    def unit_started(self, index: int, total: int | None, label: str, unit: str) -> None:
        with self._lock:
            if self.resumed and role_name(index, total, unit) is None:
                self.line(f"Executing step {index}: {label}")
            self._running[unit] = executing_line(index, total, label, unit)
            self._refresh()

    def unit_completed(self, index: int, total: int | None, label: str, unit: str, tokens: int) -> None:
        from rich.text import Text

        with self._lock:
            self._running.pop(unit, None)
            self._refresh()  # drop its spinner first, so the finished line never sits above a stale one
            self.console.print(Text("✓ ", style="green") + Text(complete_line(index, total, label, tokens, unit)))

    def notice(self, text: str) -> None:
        """Printed above the spinners (a line written around the live display would leave a frame behind)."""
        from rich.text import Text

        with self._lock:
            self.console.print(Text(text, style="yellow"))

    def abort_text(self) -> str:
        """Erase the spinners' lines and show the cursor again (the live display hid it). Called from a signal
        handler, so it takes no lock and only builds text."""
        if self._live is None:
            return ""
        lines = max(1, len(self._running))
        return "\r\x1b[2K" + "\x1b[1A\x1b[2K" * (lines - 1) + "\x1b[?25h"

    def close(self) -> None:
        with self._lock:
            self._running.clear()
            if self._live is not None:
                self._live.stop()
                self._live = None

    def _refresh(self) -> None:
        from rich.console import Group
        from rich.live import Live
        from rich.spinner import Spinner

        group = Group(*(Spinner("dots", text=text, style="cyan") for text in self._running.values()))
        if self._live is None:
            if not self._running:
                return
            self._live = Live(group, console=self.console, refresh_per_second=10, transient=True)
            self._live.start()
        else:
            self._live.update(group, refresh=True)


def make_reporter(
    out: TextIO, err: TextIO, *, live: bool, on_output_closed: Callable[[], None] | None = None
) -> LineReporter:
    if live:
        return LiveReporter(out, err, on_output_closed=on_output_closed)
    return LineReporter(out, err, on_output_closed=on_output_closed)
