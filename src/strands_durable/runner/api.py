"""Deprecated: the old home of `run_workflow`, `resume` and `load_session` (now `from strands_durable import ...`).

Every name of `strands_durable.runner.run` is still reachable here for one release, with a DeprecationWarning.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from strands_durable.deprecation import moved
    from strands_durable.runner import run

    if name.startswith("__") or not hasattr(run, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return moved(__name__, name)
