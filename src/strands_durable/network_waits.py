"""Waits on the network that no stop flag can interrupt (an S3 request to a stalled server), registered while they
last, so that a first Ctrl+C stops the run at once instead of at its next safe point (runner/signals.py).

A stop signal normally lets the run reach a safe point and commit its pause; a run stuck on a server that does not
answer would reach it only after the server's deadline, and commit nothing more anyway. Everything committed is
durable before the next step starts, so ending the process then loses nothing: the session resumes.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

_waits: dict[int, tuple[float, str]] = {}  # a wait's token -> (when it started, what it waits on)
_lock = threading.Lock()
_tokens = iter(range(1 << 62))


@contextlib.contextmanager
def waiting_on(what: str) -> Iterator[None]:
    """Register the enclosed block as a wait on the network; `what` names it (`S3 at http://...`)."""
    with _lock:
        token = next(_tokens)
        _waits[token] = (time.monotonic(), what)
    try:
        yield
    finally:
        with _lock:
            _waits.pop(token, None)


def oldest() -> tuple[float, str] | None:
    """(the monotonic time it started, what it waits on) of the longest wait in progress, or None."""
    with _lock:
        return min(_waits.values(), default=None)
