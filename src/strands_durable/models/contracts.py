"""The JSON answer contracts of the routing, evaluator and orchestrator patterns.

One source of truth for both sides: the runner appends an instruction built here to the prompt it sends and
parses the answer with the matching parser; the synthetic model recognises the same instruction in the last
user message (`detect_contract`) and answers it. Parsers are tolerant of prose around the JSON and of ```json
fences, as real models write both. This module must not import strands (the runner and CLI use it cheaply).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

ContractKind = Literal["route", "evaluation", "task_list"]


class ContractError(ValueError):
    """A model answer that does not satisfy its contract; the message says what was expected."""


@dataclass(frozen=True)
class Contract:
    """Which contract a prompt asks for, with its parameters."""

    kind: ContractKind
    route_names: tuple[str, ...] = ()
    max_workers: int | None = None


@dataclass(frozen=True)
class Evaluation:
    """An evaluator's verdict: a score in 0..100 plus the issues found and the fixes proposed."""

    score: int
    issues: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)


_ROUTE_LEAD = 'Respond with only a JSON object {"route": "<name>"} where <name> is one of: '
_EVALUATION_TEXT = (
    'Respond with only a JSON object {"score": <integer 0-100>, "issues": ["<issue>", ...], '
    '"fixes": ["<fix>", ...]} that scores how well the text meets its request, lists its issues and the '
    "fix for each."
)
_TASKS_LEAD = "Respond with only a JSON array of "
_TASKS_TAIL = ' tasks [{"task": "<description>"}, ...], each a self-contained piece of work for one worker.'

_ROUTE_RE = re.compile(re.escape(_ROUTE_LEAD) + r"(\[[^\n]*?\])\.")
_TASKS_RE = re.compile(re.escape(_TASKS_LEAD) + r"(?:at most (\d+) )?" + re.escape(_TASKS_TAIL.lstrip()))


def route_instruction(route_names: list[str]) -> str:
    """The paragraph a router prompt ends with; route names are listed as JSON strings."""
    if not route_names:
        raise ValueError("a routing contract needs at least one route name")
    return "\n\n" + _ROUTE_LEAD + json.dumps(list(route_names), ensure_ascii=False) + "."


def evaluation_instruction() -> str:
    """The paragraph an evaluator prompt ends with."""
    return "\n\n" + _EVALUATION_TEXT


def task_list_instruction(max_workers: int | None) -> str:
    """The paragraph an orchestrator prompt ends with; `max_workers` caps the number of tasks."""
    if max_workers is not None and max_workers < 1:
        raise ValueError("max_workers must be at least 1")
    bound = f"at most {max_workers} " if max_workers is not None else ""
    return "\n\n" + _TASKS_LEAD + bound + _TASKS_TAIL.lstrip()


def instruction_for(contract: Contract) -> str:
    """The instruction text for a contract (inverse of `detect_contract`)."""
    if contract.kind == "route":
        return route_instruction(list(contract.route_names))
    if contract.kind == "evaluation":
        return evaluation_instruction()
    return task_list_instruction(contract.max_workers)


def detect_contract(text: str) -> Contract | None:
    """The contract whose instruction occurs last in `text`, or None when it asks for none."""
    found: list[tuple[int, Contract]] = []
    for match in _ROUTE_RE.finditer(text):
        try:
            names = json.loads(match.group(1))
        except json.JSONDecodeError:
            continue
        if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
            found.append((match.start(), Contract("route", route_names=tuple(names))))
    position = text.rfind(_EVALUATION_TEXT)
    if position >= 0:
        found.append((position, Contract("evaluation")))
    for match in _TASKS_RE.finditer(text):
        bound = int(match.group(1)) if match.group(1) else None
        found.append((match.start(), Contract("task_list", max_workers=bound)))
    if not found:
        return None
    return max(found, key=lambda item: item[0])[1]


def strip_instructions(text: str) -> str:
    """`text` without any contract instruction (what the prompt says besides the contract)."""
    text = _ROUTE_RE.sub("", text)
    text = text.replace(_EVALUATION_TEXT, "")
    return _TASKS_RE.sub("", text).rstrip()


_FENCE_RE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)


def json_values(text: str) -> list[Any]:
    """Every JSON object or array found in `text`: fenced blocks first, then embedded ones, in order."""
    values: list[Any] = []
    decoder = json.JSONDecoder()
    for chunk in [m.group(1) for m in _FENCE_RE.finditer(text)] + [text]:
        index = 0
        while True:
            starts = [i for i in (chunk.find("{", index), chunk.find("[", index)) if i >= 0]
            if not starts:
                break
            start = min(starts)
            try:
                value, end = decoder.raw_decode(chunk, start)
            except json.JSONDecodeError:
                index = start + 1
                continue
            values.append(value)
            index = end
    return values


def _brief(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 80 else flat[:77] + "..."


def parse_route(text: str, route_names: list[str]) -> str:
    """The route a router chose; accepts {"route": name} anywhere in the text, or a bare route name."""
    by_folded = {name.casefold(): name for name in route_names}
    for value in json_values(text):
        if isinstance(value, dict) and isinstance(value.get("route"), str):
            chosen = value["route"].strip()
            if chosen in route_names:
                return chosen
            if chosen.casefold() in by_folded:
                return by_folded[chosen.casefold()]
    bare = text.strip().strip("\"'`.").strip()
    if bare.casefold() in by_folded:
        return by_folded[bare.casefold()]
    raise ContractError(f'expected {{"route": one of {route_names}}}, got: {_brief(text)!r}')


def _string_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [item if isinstance(item, str) else json.dumps(item, ensure_ascii=False) for item in value]
    return [str(value)]


def _score(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        match = re.match(r"\s*(-?\d+(?:\.\d+)?)", value)
        if not match:
            return None
        number = float(match.group(1))
    else:
        return None
    score = round(number)
    return score if 0 <= score <= 100 else None


def parse_evaluation(text: str) -> Evaluation:
    """An evaluator's verdict from {"score", "issues", "fixes"} anywhere in the text."""
    for value in json_values(text):
        if isinstance(value, dict) and "score" in value:
            score = _score(value["score"])
            if score is None:
                raise ContractError(f"evaluation score must be a number in 0..100, got {value['score']!r}")
            return Evaluation(score, _string_list(value.get("issues")), _string_list(value.get("fixes")))
    raise ContractError(
        f'expected a JSON object {{"score": 0-100, "issues": [...], "fixes": [...]}}, got: {_brief(text)!r}'
    )


def _task_text(item: Any) -> str | None:
    if isinstance(item, str):
        return item.strip() or None
    if isinstance(item, dict):
        for key in ("task", "description", "prompt"):
            if isinstance(item.get(key), str) and item[key].strip():
                return item[key].strip()
    return None


def parse_task_list(text: str, *, max_workers: int | None = None) -> list[str]:
    """The tasks of an orchestrator answer: [{"task": ...}] or ["..."] (or {"tasks": [...]}) in the text.

    With `max_workers` the list is cut to that many tasks.
    """
    for value in json_values(text):
        items = value.get("tasks") if isinstance(value, dict) else value
        if not isinstance(items, list):
            continue
        tasks = [task for task in (_task_text(item) for item in items) if task is not None]
        if len(tasks) != len(items):
            continue
        return tasks[:max_workers] if max_workers is not None else tasks
    raise ContractError(f'expected a JSON array [{{"task": "..."}}, ...], got: {_brief(text)!r}')
