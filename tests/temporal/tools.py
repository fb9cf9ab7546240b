"""Tools for the Temporal tests: each call appends a line to the ledger file named by $STRANDS_TEST_LEDGER, then
takes a moment, so a test can kill a worker while a unit is inside a tool (`timed_lookup`: start and end lines with
pid and time in $STRANDS_TEST_INTERVALS, to see units overlap on different workers)."""

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


@tool
def timed_lookup(query: str) -> str:
    """Look something up (slowly), noting when.

    Args:
        query: what to look up
    """
    intervals = os.environ.get("STRANDS_TEST_INTERVALS")  # `start|end PID TIME QUERY` lines, outside the session
    if intervals:
        with open(intervals, "a", encoding="utf-8") as handle:
            handle.write(f"start {os.getpid()} {time.time():.3f} {query}\n")
    time.sleep(float(os.environ.get("STRANDS_TEST_TOOL_SECONDS", "0.3")))
    if intervals:
        with open(intervals, "a", encoding="utf-8") as handle:
            handle.write(f"end {os.getpid()} {time.time():.3f} {query}\n")
    return f"found: {query[:40]}"
