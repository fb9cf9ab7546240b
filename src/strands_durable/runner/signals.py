"""Ctrl+C, SIGTERM and a closed stdout during a run: the first asks the run to stop at its next safe point (a
model call in flight is cancelled, never committed), a second signal ends the process at once (everything
committed is durable, so the session stays resumable either way).

Handlers run in the main thread while the agent's event loop may run in other threads; they only set a flag that
the durable agent polls at its safe points (before a model call, before a tool runs, between stream chunks) and
that our models watch while a call is in flight. A run that waits on the network where no flag is polled (an S3
request to a stalled server, `network_waits`) for more than STUCK_AFTER_S after the first signal ends at once, as
after a second one.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

from strands_durable import network_waits
from strands_durable.errors import ExitCode

CLOSED_STDOUT = -1  # `received` when the reader of stdout went away (`strands run ... | head -1`)
_EXIT_CODES = {signal.SIGINT: int(ExitCode.SIGINT), signal.SIGTERM: int(ExitCode.SIGTERM)}
_NAMES = {signal.SIGINT: "Ctrl+C", signal.SIGTERM: "SIGTERM", CLOSED_STDOUT: "stdout closed"}
_AGAIN = {signal.SIGINT: "Ctrl+C again aborts at once", signal.SIGTERM: "a second SIGTERM aborts at once"}
STUCK_AFTER_S = 1.0
"""How long after the first signal a wait on the network may go on before the process ends at once."""


class RunningTools:
    """The tools running now, from the run's `ToolCall` crash points (`tool.before` to `tool.executed`)."""

    def __init__(self) -> None:
        self._running: dict[tuple[str, str], str] = {}

    def observe(self, point: Any) -> None:
        if point.site == "tool.before":
            self._running[point.key] = point.name
        elif point.site == "tool.executed":
            self._running.pop(point.key, None)

    def names(self) -> list[str]:
        return list(self._running.values())


class StopSignals:
    """A context manager installing the two-stage SIGINT/SIGTERM handlers; `requested` is the run's stop flag.

    `notice(text)` shows the first signal's notice (default: written to stderr; a live display prints it above
    its spinners), called from a short-lived thread, never inside the handler. `on_abort()` returns the text
    written to stderr before a second signal ends the process (restore the terminal, say how to resume).
    """

    def __init__(
        self,
        notice_fd: int = 2,
        *,
        notice: Callable[[str], None] | None = None,
        on_abort: Callable[[], str] | None = None,
        running_tools: Callable[[], list[str]] | None = None,
    ) -> None:
        self.received: int | None = None
        self.stuck_on: str | None = None  # what the run waited on when it was ended at once after one signal
        self._notice_fd = notice_fd
        self._notice = notice
        self._on_abort = on_abort
        self._running_tools = running_tools  # the names of the tools running now: a stop waits for them
        self._previous: dict[int, Any] = {}
        self._finished = threading.Event()

    def requested(self) -> bool:
        return self.received is not None

    def output_closed(self) -> None:
        """Stdout's reader went away: stop as SIGTERM would, without a notice (stderr says it at the end)."""
        if self.received is None:
            self.received = CLOSED_STDOUT

    @property
    def exit_code(self) -> int:
        if self.received == CLOSED_STDOUT:
            return int(ExitCode.SIGPIPE)
        return _EXIT_CODES.get(self.received, int(ExitCode.SIGINT))  # type: ignore[arg-type]

    @property
    def signal_name(self) -> str:
        return _NAMES.get(self.received, "a signal")  # type: ignore[arg-type]

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in _EXIT_CODES:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        self._finished.set()
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is not None:
            self._abort(signum)  # second signal
            return
        self.received = signum
        threading.Thread(target=self._abort_when_stuck, args=(signum,), name="stop-when-stuck", daemon=True).start()
        tools: list[str] = []
        if self._running_tools is not None:
            with contextlib.suppress(Exception):
                tools = sorted(set(self._running_tools()))
        if tools:  # a running tool is let finish: say which one the stop waits for
            names = ", ".join(f"'{name}'" for name in tools)
            notice = (
                f"{_NAMES[signum]} received: stopping now; waiting for the running tool{'s' if len(tools) > 1 else ''} "
                f"{names} to finish (a finished tool's result is committed, never run again) ({_AGAIN[signum]})"
            )
        else:
            notice = (
                f"{_NAMES[signum]} received: stopping now; a model call in flight is cancelled (not committed, the "
                f"resume asks again) ({_AGAIN[signum]})"
            )
        if self._notice is None:
            with contextlib.suppress(OSError):
                os.write(self._notice_fd, f"\n{notice}\n".encode())
        else:  # a display may hold locks this thread was interrupted in: print from another thread
            threading.Thread(target=self._notice, args=(notice,), daemon=True).start()

    def _abort(self, signum: int) -> None:
        """End the process now: no cleanup, no final record; the lease dies with the process."""
        text = ""
        if self._on_abort is not None:
            with contextlib.suppress(Exception):
                text = self._on_abort()
        with contextlib.suppress(OSError):
            os.write(self._notice_fd, text.encode())
        os._exit(_EXIT_CODES[signum])

    def _abort_when_stuck(self, signum: int) -> None:
        """After the first signal, until the run ends: end the process at once when it waits on the network for
        longer than STUCK_AFTER_S since the signal (a safe point will not come soon)."""
        signalled = time.monotonic()
        while not self._finished.wait(0.05):
            wait = network_waits.oldest()
            if wait is not None and time.monotonic() - max(wait[0], signalled) >= STUCK_AFTER_S:
                self.stuck_on = wait[1]
                self._abort(signum)
