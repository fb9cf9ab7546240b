"""Durable sessions for plain-Python Strands agents: `DurableSessionManager`, `non_idempotent`, `dedup_key`.

The manager (a strands `SessionManager`) is imported on first use, so the modules here that the CLI uses to check
and repair the SDK's own session directories (`file_sessions`) never import strands-agents.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["DurableSessionManager", "SessionChanged", "SessionUsage", "dedup_key", "non_idempotent"]

_LAZY = {
    "DurableSessionManager": "strands_durable.sdk.manager",
    "SessionChanged": "strands_durable.errors",
    "SessionUsage": "strands_durable.sdk.manager",
    "dedup_key": "strands_durable.sdk.side_effects",
    "non_idempotent": "strands_durable.runner.marks",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'strands_durable.sdk' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
