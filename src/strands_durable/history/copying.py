"""Deep copies of message data, fast for the JSON-like shapes histories are made of."""

from __future__ import annotations

import copy
from typing import TypeVar

T = TypeVar("T")

_IMMUTABLE = frozenset({str, int, float, bool, bytes, type(None)})


def copy_message_data(value: T) -> T:
    """A deep copy of `value`: dicts and lists are rebuilt, immutable leaves shared, anything else goes
    through `copy.deepcopy`. About 2.5 times faster than `copy.deepcopy` on message lists."""
    cls = value.__class__
    if cls is dict:
        return {key: copy_message_data(item) for key, item in value.items()}  # type: ignore[attr-defined,return-value]
    if cls is list:
        return [copy_message_data(item) for item in value]  # type: ignore[attr-defined,return-value]
    if cls in _IMMUTABLE:
        return value
    return copy.deepcopy(value)
