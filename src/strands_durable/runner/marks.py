"""Marks a user puts on Python tools: `non_idempotent` (a crash that hides whether it ran must not run it again)."""

from __future__ import annotations

from typing import Any

IDEMPOTENT_ATTRIBUTE = "__strands_idempotent__"


def non_idempotent(func: Any) -> Any:
    """Mark a Python tool as non-idempotent: if a crash hides whether it ran, it is not run again."""
    setattr(func, IDEMPOTENT_ATTRIBUTE, False)
    inner = getattr(func, "_tool_func", None)
    if inner is not None:
        setattr(inner, IDEMPOTENT_ATTRIBUTE, False)
    return func
