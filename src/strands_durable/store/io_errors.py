"""How the stores turn an OSError into the one-line exit-12 error: what was being done, to which session, and why."""

from __future__ import annotations

import errno
import os

from strands_durable.errors import StorageIOError

__all__ = ["io_error"]


def io_error(exc: OSError, what: str) -> StorageIOError:
    """`<what>: <cause> (<ERRNO name>)`, e.g. `cannot commit to session 1f2e...: No space left on device (ENOSPC)`."""
    if exc.errno:
        name = errno.errorcode.get(exc.errno)
        reason = os.strerror(exc.errno) + (f" ({name})" if name else "")
    else:
        reason = str(exc) or type(exc).__name__
    return StorageIOError(f"{what}: {reason}")
