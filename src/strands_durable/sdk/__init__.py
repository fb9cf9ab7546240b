"""Durable sessions for plain-Python Strands agents: `DurableSessionManager`, `non_idempotent`, `dedup_key`.

Importing this package imports strands-agents (the manager is a strands `SessionManager`); `strands_durable`
exports `DurableSessionManager` lazily so the CLI stays fast.
"""

from __future__ import annotations

from strands_durable.runner.tools import non_idempotent
from strands_durable.sdk.manager import DurableSessionManager, SessionChanged
from strands_durable.sdk.side_effects import dedup_key

__all__ = ["DurableSessionManager", "SessionChanged", "dedup_key", "non_idempotent"]
