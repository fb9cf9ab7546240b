"""JSON as the store reads and writes it: nested at most MAX_DEPTH levels, so a hostile file is refused (a
ValueError) before any recursion over it can run out of stack.

Python's decoder recurses once per level and raises RecursionError (not ValueError) past the interpreter's limit;
what it does decode may still be too deep for the code that walks it later on a deeper stack. Counting brackets
costs little: a text with at most MAX_DEPTH opening brackets cannot be deeper, and only a longer one is measured
(strings skipped, in bytes operations that run at memory speed).
"""

from __future__ import annotations

import json
from itertools import accumulate
from typing import Any

MAX_DEPTH = 512
"""The deepest nesting of arrays and objects the store accepts in any JSON it reads or writes. A record holds a
message (about 8 levels: events, message, content, block, toolUse, input) and what a model put in a tool's input."""

_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


class TooDeep(ValueError):
    """JSON nested deeper than MAX_DEPTH levels."""

    def __init__(self) -> None:
        super().__init__(f"nested deeper than {MAX_DEPTH} levels")


def depth_exceeds(data: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text `data` nests arrays and objects more than `limit` levels deep (brackets inside strings
    do not count; text that is not JSON gets some answer, and then fails to decode)."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    # JSON escapes are pairs (`\\`, `\"`, ...): dropping the escaped backslashes, then the escaped quotes, leaves
    # the quotes that open and close strings, and the text outside strings is every other piece between them
    outside = b"".join(data.replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')[::2])
    brackets = outside.translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit


def loads(data: bytes | str) -> Any:
    """`json.loads` that refuses text nested deeper than MAX_DEPTH (TooDeep, a ValueError)."""
    raw = data.encode() if isinstance(data, str) else data
    if depth_exceeds(raw):
        raise TooDeep()
    try:
        return json.loads(raw)
    except RecursionError:  # only on a stack already deep when called: the text itself is within the limit
        raise TooDeep() from None


def check_depth(data: bytes) -> None:
    """Refuse to write JSON text that `loads` would refuse to read (TooDeep)."""
    if depth_exceeds(data):
        raise TooDeep()
