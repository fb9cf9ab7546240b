"""Tools for the Temporal tests: each call appends a line to the ledger file named by $STRANDS_TEST_LEDGER, then
takes a moment, so a test can kill a worker while a unit is inside a tool."""

from __future__ import annotations

import os
import time

from strands import tool


@tool
def slow_lookup(query: str) -> str:
    """Look something up (slowly).

    Args:
        query: what to look up
    """
    ledger = os.environ.get("STRANDS_TEST_LEDGER")
    if ledger:
        with open(ledger, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} {query}\n")
    time.sleep(float(os.environ.get("STRANDS_TEST_TOOL_SECONDS", "0.3")))
    return f"found: {query[:40]}"
