"""A helper thread's work that calls back into the object it serves, held without keeping that object alive.

A session's views writer and journal syncer call the session's own methods. Held strongly, each bound method made a
reference cycle between the session and its helper, so a session that ended without `close` (a crashed run: the
chaos explorer leaves one at most crash points) kept its state and buffers until the cyclic collector found it.
Held weakly, the session goes as soon as its last user lets go of it.
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["weakly"]


def weakly(method: Callable[..., Any], gone: Callable[..., Any]) -> Callable[..., Any]:
    """`method` called through a weak reference to its object when it is a bound method (anything else is returned
    as it is). Once that object is gone, `gone` is called with the same arguments instead."""
    if not isinstance(method, types.MethodType):
        return method
    reference = weakref.WeakMethod(method)

    def call(*args: Any) -> Any:
        bound = reference()
        return (gone if bound is None else bound)(*args)

    return call
