"""Calls counted by cProfile, by what they stand for: the cost tests count work per crash point or per resume this
way, exactly and whatever the machine's load."""

from __future__ import annotations

import cProfile
import pstats
from collections import Counter
from collections.abc import Mapping


def calls_by_term(profile: cProfile.Profile, terms: Mapping[tuple[str, str], str]) -> Counter[str]:
    """The calls `profile` counted of each function of `terms` ((a file it is in, its name) -> what a call is)."""
    counts: Counter[str] = Counter()
    for (filename, _, name), (_, calls, *_) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        for (where, function), term in terms.items():
            if name == function and filename.replace("\\", "/").endswith(where):
                counts[term] += calls
    return counts
