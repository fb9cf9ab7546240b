"""Stable digests and digest-seeded choices: the same bytes on every process, platform and Python version.

Nothing here uses `hash()` or `random`: a choice is a pure function of a sha256 key and a counter.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return {"__bytes__": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace; bytes become base64."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_json_default)


def sha256_hex(*parts: str) -> str:
    """sha256 over the parts, each length-prefixed so that ("ab", "c") and ("a", "bc") differ."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


class DigestRandom:
    """A deterministic stream of choices derived from a key (counter-mode sha256)."""

    def __init__(self, *key: str) -> None:
        self._key = sha256_hex(*key)
        self._counter = 0

    def _next64(self) -> int:
        block = hashlib.sha256(f"{self._key}:{self._counter}".encode()).digest()
        self._counter += 1
        return int.from_bytes(block[:8], "big")

    def below(self, n: int) -> int:
        """An integer in [0, n); n must be positive."""
        if n <= 0:
            raise ValueError("below() needs a positive bound")
        return self._next64() % n

    def between(self, low: int, high: int) -> int:
        """An integer in [low, high] (inclusive)."""
        if high < low:
            raise ValueError(f"empty range [{low}, {high}]")
        return low + self.below(high - low + 1)

    def unit(self) -> float:
        """A float in [0, 1)."""
        return (self._next64() >> 11) / float(1 << 53)

    def chance(self, probability: float) -> bool:
        return self.unit() < probability

    def choice(self, options: Sequence[T]) -> T:
        if not options:
            raise ValueError("choice() from an empty sequence")
        return options[self.below(len(options))]

    def sample(self, options: Sequence[T], k: int) -> list[T]:
        """k distinct elements (by position), in the order drawn; k is capped at len(options)."""
        pool = list(options)
        picked: list[T] = []
        for _ in range(min(k, len(pool))):
            picked.append(pool.pop(self.below(len(pool))))
        return picked
