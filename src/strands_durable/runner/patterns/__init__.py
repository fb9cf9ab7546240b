"""The seven patterns as small executors over units of work; each returns its artifact template context."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strands_durable.errors import Unsupported


def executor_for(pattern_type: str) -> Callable[[Any], dict[str, Any]]:
    if pattern_type == "chain":
        from strands_durable.runner.patterns.chain import run_chain

        return run_chain
    raise Unsupported(f"pattern '{pattern_type}' (pattern.type) is not supported yet")
