"""Ctrl+C and SIGTERM during a run: the first asks the run to stop at its next safe point, a second ends the
process at once (everything committed is durable, so the session stays resumable either way).

Handlers run in the main thread while the agent's event loop runs in a worker thread; they only set a flag that
the durable agent polls at its safe points (before a model call, before a tool runs).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from types import FrameType
from typing import Any

from strands_durable.errors import ExitCode

_EXIT_CODES = {signal.SIGINT: int(ExitCode.SIGINT), signal.SIGTERM: int(ExitCode.SIGTERM)}
_NAMES = {signal.SIGINT: "Ctrl+C", signal.SIGTERM: "SIGTERM"}


class StopSignals:
    """A context manager installing the two-stage SIGINT/SIGTERM handlers; `requested` is the run's stop flag."""

    def __init__(self, notice_fd: int = 2) -> None:
        self.received: int | None = None
        self._notice_fd = notice_fd
        self._previous: dict[int, Any] = {}

    def requested(self) -> bool:
        return self.received is not None

    @property
    def exit_code(self) -> int:
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
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is not None:
            # second signal: no cleanup, no final record; the lease dies with the process
            os._exit(_EXIT_CODES[signum])
        self.received = signum
        notice = f"\n{_NAMES[signum]} received: stopping at the next safe point (Ctrl+C again aborts at once)\n"
        with contextlib.suppress(OSError):
            os.write(self._notice_fd, notice.encode())
