"""What `strands run` prints as it goes: the user's document's lines, plain or as a live display on a terminal.

`LineReporter` writes one line per event (pipes, logs, `--json` where the lines go to stderr); `LiveReporter`
shows the executing units with a spinner and prints each finished line above it. Both are `Reporter`s the
runner calls; calls may come from several threads (concurrent units).
"""

from __future__ import annotations

import threading
from typing import Any, TextIO

from strands_durable.runner.reporter import Reporter


def step_name(index: int, total: int | None) -> str:
    return f"Step {index + 1}/{total}" if total else f"Step {index + 1}"


def executing_line(index: int, total: int | None, label: str) -> str:
    return f"{step_name(index, total)}: {label} - EXECUTING"


def complete_line(index: int, total: int | None, label: str, tokens: int) -> str:
    return f"{step_name(index, total)}: {label} - COMPLETE ({tokens} tokens)"


def total_tokens_line(tokens_before: int, tokens_total: int, *, resumed: bool) -> str:
    if not resumed:
        return f"Total tokens: {tokens_total}"
    return f"Total tokens: {tokens_total} ({tokens_before} from resumed session + {tokens_total - tokens_before} new)"


class LineReporter(Reporter):
    """Plain lines: progress on `out`, warnings on `err`."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err
        self.session_id: str | None = None
        self.workflow: str | None = None
        self.resumed = False
        self.status: str | None = None
        self._lock = threading.RLock()

    # -- printing -------------------------------------------------------------------------------------
    def line(self, text: str) -> None:
        with self._lock:
            print(text, file=self.out, flush=True)

    def warn(self, text: str) -> None:
        with self._lock:
            print(text, file=self.err, flush=True)

    def close(self) -> None:
        """End any live display (called once the run returns or raises)."""

    # -- the Reporter interface -----------------------------------------------------------------------
    def session_started(self, session_id: str, workflow: str, *, resumed: bool) -> None:
        self.session_id, self.workflow, self.resumed = session_id, workflow, resumed
        if not resumed:
            self.line(f"Session ID: {session_id}")
        self.line(f"Running workflow: {workflow}")

    def warning(self, text: str) -> None:
        for part in text.splitlines():
            self.warn(part)

    def unit_skipped(self, index: int, label: str, unit: str) -> None:
        self.line(f"Skipping completed step {index}: {label}")

    def unit_started(self, index: int, total: int | None, label: str, unit: str) -> None:
        with self._lock:
            if self.resumed:
                self.line(f"Executing step {index}: {label}")
            self.line(executing_line(index, total, label))

    def unit_completed(self, index: int, total: int | None, label: str, unit: str, tokens: int) -> None:
        self.line(complete_line(index, total, label, tokens))

    def finished(self, status: str, tokens_before: int, tokens_total: int) -> None:
        self.status = status
        with self._lock:
            self.close()
            if status == "completed":
                self.line("✓ Workflow complete")
            self.line(total_tokens_line(tokens_before, tokens_total, resumed=self.resumed))


class LiveReporter(LineReporter):
    """On a terminal: executing units spin below the finished lines, which stay on screen."""

    def __init__(self, out: TextIO, err: TextIO, *, console: Any = None) -> None:
        super().__init__(out, err)
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
            if self.resumed:
                self.line(f"Executing step {index}: {label}")
            self._running[unit] = executing_line(index, total, label)
            self._refresh()

    def unit_completed(self, index: int, total: int | None, label: str, unit: str, tokens: int) -> None:
        from rich.text import Text

        with self._lock:
            self._running.pop(unit, None)
            self._refresh()  # drop its spinner first, so the finished line never sits above a stale one
            self.console.print(Text("✓ ", style="green") + Text(complete_line(index, total, label, tokens)))

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


def make_reporter(out: TextIO, err: TextIO, *, live: bool) -> LineReporter:
    return LiveReporter(out, err) if live else LineReporter(out, err)
