"""Every command's answer to a closed stdout (`strands sessions list | head -1`): stop writing, exit 141, no error.

`WatchedStdout` stands in for `sys.stdout` while a command runs: it notices the first write or flush that finds
the reader gone, points the stream at /dev/null (so nothing later, the interpreter's final flush included, fails
again) and lets the BrokenPipeError go on, so whoever writes can react (`strands run` stops at its next safe
point). Whatever then happens to the error (click turns one into exit 1), the command ends with exit 141.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, TextIO


def silence_closed_stream(stream: TextIO) -> None:
    """Point a stream whose reader went away at /dev/null, so later writes and the interpreter's final flush do
    not fail again (Python's documented recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


class WatchedStdout:
    """A text stream that records whether its reader went away; every other attribute is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._gone()
            raise

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()
            raise

    def finish(self) -> None:
        """Write out what is still buffered (the output of a short command is written only here)."""
        with contextlib.suppress(BrokenPipeError):
            self.flush()

    def _gone(self) -> None:
        if not self.reader_gone:
            self.reader_gone = True
            silence_closed_stream(self._stream)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


__all__ = ["WatchedStdout", "silence_closed_stream"]
