"""Field types shared by the spec models: identifiers, templates, agent references, and the strict base model.

`Template` and `AgentName` carry markers that `references.py` finds by walking a validated spec, so that a
new template or agent field is checked the moment a model declares it.
"""

from __future__ import annotations

import re
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

ID_PATTERN = re.compile(r"^[A-Za-z0-9._:-]+$")


class SpecModel(BaseModel):
    """Strict: unknown keys are errors and values keep the types the file gave them ("5" is not 5). Frozen: a
    loaded spec is shared (load_spec caches it), so nothing may reassign its fields."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=False)


def check_identifier(value: str) -> str:
    """An id is used as a directory name: `^[A-Za-z0-9._:-]+$`, and neither `.` nor `..`."""
    if not ID_PATTERN.fullmatch(value):
        raise ValueError(f"'{value}' is not a valid id (letters, digits, '.', '_', ':', '-')")
    if value in (".", ".."):
        raise ValueError(f"'{value}' is not a valid id (it names a directory)")
    return value


Identifier = Annotated[str, AfterValidator(check_identifier)]
NonEmpty = Annotated[str, Field(min_length=1)]


class TemplateMarker:
    """Marks a string field that is a Jinja2 template (syntax checked at load)."""

    def __repr__(self) -> str:
        return "Template"


class ConditionMarker:
    """Marks a graph `when` condition (an expression, `{{ expression }}`, or `else`)."""

    def __repr__(self) -> str:
        return "Condition"


class AgentMarker:
    """Marks a string field that names an agent in `agents`."""

    def __repr__(self) -> str:
        return "AgentName"


TEMPLATE = TemplateMarker()
CONDITION = ConditionMarker()
AGENT = AgentMarker()


def markers_of(annotation: Any, metadata: list[Any]) -> frozenset[Any]:
    """The markers on a field, also when they sit inside `X | None` (where pydantic does not lift them)."""
    found = {item for item in metadata if item in _MARKERS}
    stack = [annotation]
    while stack:
        current = stack.pop()
        found.update(item for item in getattr(current, "__metadata__", ()) if item in _MARKERS)
        if get_origin(current) in (Union, UnionType):
            stack.extend(get_args(current))
        elif get_origin(current) is Annotated:
            stack.append(get_args(current)[0])
    return frozenset(found)


_MARKERS = (TEMPLATE, CONDITION, AGENT)

Template = Annotated[str, TEMPLATE]
Condition = Annotated[str, Field(min_length=1), CONDITION]
AgentName = Annotated[str, Field(min_length=1), AGENT]

__all__ = [
    "AGENT",
    "CONDITION",
    "ID_PATTERN",
    "TEMPLATE",
    "AgentName",
    "Condition",
    "Identifier",
    "NonEmpty",
    "SpecModel",
    "Template",
    "check_identifier",
    "markers_of",
]
