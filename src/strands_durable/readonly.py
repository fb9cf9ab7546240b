"""Read-only views of live objects: a subscriber may read a run's state at a crash point but never change it.

`readonly(value)` wraps without copying; every container reached through a view is wrapped in turn, so no depth
can be written (item assignment raises TypeError, mutating methods do not exist). A view reads the live object:
it is valid while the object is, and shows later changes. `copy.deepcopy(view)` returns a plain, writable copy.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator, Mapping, Sequence, Set
from typing import Any

_SCALARS = (str, bytes, int, float, bool, type(None))


def readonly(value: Any) -> Any:
    """`value` itself when it cannot be changed, else a read-only view of it."""
    if isinstance(value, (*_SCALARS, _View, ObjectView)):
        return value
    if isinstance(value, Mapping):
        return MappingView(value)
    if isinstance(value, (list, tuple)):
        return SequenceView(value)
    if isinstance(value, (set, frozenset)):
        return SetView(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ObjectView(value)
    raise TypeError(f"no read-only view of a {type(value).__name__}")


class _View:
    """What every container view shares: the live target, its length, a plain deep copy, a readable repr."""

    __slots__ = ("_target",)

    def __init__(self, target: Any) -> None:
        self._target = target

    def __len__(self) -> int:
        return len(self._target)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return copy.deepcopy(self._target, memo)

    def __repr__(self) -> str:
        return f"readonly({self._target!r})"


class MappingView(_View, Mapping[Any, Any]):
    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        return readonly(self._target[key])

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._target))  # other threads may add keys while a subscriber reads


class SequenceView(_View, Sequence[Any]):
    __slots__ = ()

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return SequenceView(self._target[index])
        return readonly(self._target[index])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


class SetView(_View, Set[Any]):
    __slots__ = ()

    def __contains__(self, item: object) -> bool:
        return item in self._target

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._target))


class ObjectView:
    """A dataclass instance's fields and properties, each read-only; its methods are not offered (they may write)."""

    __slots__ = ("_target",)

    def __init__(self, target: Any) -> None:
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name: str) -> Any:
        target = object.__getattribute__(self, "_target")
        fields = {f.name for f in dataclasses.fields(target)}
        if name in fields or isinstance(getattr(type(target), name, None), property):
            return readonly(getattr(target, name))
        raise AttributeError(f"a read-only view of {type(target).__name__} has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"{type(self._target).__name__} is read-only here")

    def __delattr__(self, name: str) -> None:
        raise TypeError(f"{type(self._target).__name__} is read-only here")

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return copy.deepcopy(self._target, memo)

    def __repr__(self) -> str:
        return f"readonly({self._target!r})"
