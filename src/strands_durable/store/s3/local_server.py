"""Deprecated: the local test server moved to `strands_durable.testing.s3_server` (goes away in 0.2).

`python -m strands_durable.store.s3.local_server DATA_DIR [BUCKET]` still starts it, with a DeprecationWarning.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from strands_durable.deprecation import moved
    from strands_durable.testing import s3_server

    if name.startswith("__") or not hasattr(s3_server, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return moved(__name__, name)


if __name__ == "__main__":
    import sys

    raise SystemExit(__getattr__("main")(sys.argv[1:]))
