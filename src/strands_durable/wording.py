"""Counts in words for messages: `counted(1, "workflow")` is "1 workflow", `counted(2, "class", "classes")` is
"2 classes" (never "1 workflows" or "workflow(s)")."""

from __future__ import annotations


def counted(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else (plural or word + 's')}"
