"""`strands` on a pseudo-terminal, rendered by a terminal emulator (pyte), for what only a terminal shows:
the live display, the cursor, Ctrl+C typed as a key (the terminal sends SIGINT to the foreground group)."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

import pyte

COLUMNS, ROWS = 120, 40


class Terminal:
    """A child `strands` whose controlling terminal is ours; its bytes feed an emulated screen."""

    def __init__(self, *args: str, cwd: Path, env: dict[str, str]) -> None:
        full_env = {**os.environ, **env, "TERM": "xterm-256color", "COLUMNS": str(COLUMNS), "LINES": str(ROWS)}
        full_env.pop("NO_COLOR", None)
        argv = [sys.executable, "-m", "strands_durable", *args]
        pid, fd = pty.fork()
        if pid == 0:  # the child: exec at once (the parent may have threads)
            try:
                os.chdir(cwd)
                os.execve(sys.executable, argv, full_env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.raw = b""
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self._stream = pyte.ByteStream(self.screen)
        self.returncode: int | None = None

    def _read(self, timeout: float) -> bool:
        """Feed what arrives within `timeout`; False once the child closed the terminal."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: every writer is gone
            return False
        if not data:
            return False
        self.raw += data
        self._stream.feed(data)
        return True

    def wait_for(self, needle: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.raw.decode(errors="replace"):
            if time.monotonic() > deadline or not self._read(0.1):
                raise AssertionError(f"never saw {needle!r}; screen:\n" + "\n".join(self.lines()))

    def press_ctrl_c(self) -> None:
        os.write(self.fd, b"\x03")

    def finish(self, timeout: float = 30.0) -> int:
        deadline = time.monotonic() + timeout
        while self._read(0.1):
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                raise AssertionError("the child did not end; screen:\n" + "\n".join(self.lines()))
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def lines(self) -> list[str]:
        """The screen as a person sees it now, trailing blank lines dropped."""
        rows = [row.rstrip() for row in self.screen.display]
        while rows and not rows[-1]:
            rows.pop()
        return rows

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            os.close(self.fd)
            self.returncode = -9
