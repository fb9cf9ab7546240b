"""strands-durable: crash-safe runner and session store for strands-cli v0 workflow specs.

The public API is imported lazily so that `strands --help` never pays for importing strands-agents.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["DurableSessionManager", "__version__"]

_LAZY = {"DurableSessionManager": "strands_durable.sdk"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'strands_durable' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
