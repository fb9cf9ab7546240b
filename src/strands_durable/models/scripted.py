"""`ScriptedModel` (`provider: scripted`): exact, per-agent scripts of model turns for tests.

A script is a list of turns. A turn is a text answer (`"..."` or `{"text": "..."}`) or tool calls (a list of
`{"name", "input", "toolUseId"?}`, or `{"tool_calls": [...], "text"?: "..."}`), optionally with
`"usage": {"inputTokens", "outputTokens"}`. The turn answered is the number of assistant messages already in
the request, never an internal counter, so a resumed run in fresh objects continues at the right turn.
A script file (JSON or YAML) holds one script (a list) or a mapping of agent id -> script.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import WorkflowFailed
from .answer import TOOL_USE_ID_RE, Answer, ToolCall, Usage, estimated_usage
from .base import PolicyModel
from .events import StreamFault
from .request import ModelRequest


class ScriptError(ValueError):
    """A script that cannot be read or has a malformed turn; the message names the turn."""


class ScriptExhausted(WorkflowFailed):
    """The conversation asks for a turn the script does not have."""


@dataclass(frozen=True)
class ScriptedTurn:
    text: str | None
    tool_calls: tuple[dict[str, Any], ...]
    usage: Usage | None


def _parse_usage(raw: Any, where: str) -> Usage | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ScriptError(f"{where}: usage must be a mapping")
    try:
        return Usage(
            int(raw.get("inputTokens", raw.get("input_tokens", 0))),
            int(raw.get("outputTokens", raw.get("output_tokens", 0))),
        )
    except (TypeError, ValueError) as exc:
        raise ScriptError(f"{where}: usage token counts must be integers") from exc


def _parse_call(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str) or not raw["name"]:
        raise ScriptError(f"{where}: a tool call needs a 'name'")
    arguments = raw.get("input", {})
    if not isinstance(arguments, Mapping):
        raise ScriptError(f"{where}: tool call input must be a mapping")
    call: dict[str, Any] = {"name": raw["name"], "input": dict(arguments)}
    tool_use_id = raw.get("toolUseId")
    if tool_use_id is not None:
        if not isinstance(tool_use_id, str) or not TOOL_USE_ID_RE.fullmatch(tool_use_id):
            raise ScriptError(f"{where}: toolUseId {tool_use_id!r} must match {TOOL_USE_ID_RE.pattern}")
        call["toolUseId"] = tool_use_id
    return call


def parse_turn(raw: Any, index: int) -> ScriptedTurn:
    """One script turn from its data form (see the module docstring)."""
    where = f"turn {index}"
    if isinstance(raw, str):
        return ScriptedTurn(raw, (), None)
    if isinstance(raw, list):
        raw = {"tool_calls": raw}
    if not isinstance(raw, Mapping):
        raise ScriptError(f"{where}: expected text, a list of tool calls or a mapping, got {type(raw).__name__}")
    unknown = set(raw) - {"text", "tool_calls", "usage"}
    if unknown:
        raise ScriptError(f"{where}: unknown keys {sorted(unknown)}")
    text = raw.get("text")
    if text is not None and not isinstance(text, str):
        raise ScriptError(f"{where}: text must be a string")
    calls = raw.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ScriptError(f"{where}: tool_calls must be a list")
    if text is None and not calls:
        raise ScriptError(f"{where}: a turn needs text or tool calls")
    parsed = tuple(_parse_call(call, f"{where}, call {i}") for i, call in enumerate(calls))
    return ScriptedTurn(text, parsed, _parse_usage(raw.get("usage"), where))


def load_script_file(path: str | Path) -> list[Any] | dict[str, list[Any]]:
    """The data of a JSON or YAML script file: one script (a list) or agent id -> script."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise ScriptError(f"{path}: cannot read script: {exc}") from exc
    if isinstance(data, list) or (isinstance(data, dict) and all(isinstance(v, list) for v in data.values())):
        return data
    raise ScriptError(f"{path}: a script file holds a list of turns or a mapping of agent id -> turns")


def select_script(scripts: Sequence[Any] | Mapping[str, Any], agent_id: str | None) -> list[Any]:
    """The script for `agent_id` from one script or a mapping (falling back to a `"*"` entry)."""
    if not isinstance(scripts, Mapping):
        return list(scripts)
    if agent_id is not None and agent_id in scripts:
        return list(scripts[agent_id])
    if "*" in scripts:
        return list(scripts["*"])
    raise ScriptError(f"no script for agent {agent_id!r} (scripts exist for: {', '.join(sorted(scripts))})")


class ScriptedPolicy:
    """Answers turn N of the script to a request holding N assistant messages."""

    def __init__(self, turns: Sequence[Any], *, name: str = "scripted") -> None:
        self.turns = [parse_turn(raw, i) for i, raw in enumerate(turns)]
        self.name = name

    def answer(self, request: ModelRequest) -> Answer:
        index = request.assistant_turns()
        if index >= len(self.turns):
            raise ScriptExhausted(
                f"scripted model {self.name!r} has {len(self.turns)} turns; the conversation asks for turn {index + 1}"
            )
        turn = self.turns[index]
        calls = [
            ToolCall(call["name"], call["input"], call.get("toolUseId") or f"tooluse_s{index}_{i}")
            for i, call in enumerate(turn.tool_calls)
        ]
        return Answer(turn.text, calls, turn.usage or estimated_usage(request, turn.text, calls))


class ScriptedModel(PolicyModel):
    """A Strands model that plays a script; deterministic and stateless."""

    def __init__(
        self,
        turns: Sequence[Any],
        *,
        name: str = "scripted",
        model_id: str = "scripted",
        stream_fault: StreamFault | None = None,
        **config: Any,
    ) -> None:
        super().__init__(ScriptedPolicy(turns, name=name), stream_fault=stream_fault, model_id=model_id, **config)

    @classmethod
    def from_file(cls, path: str | Path, *, agent_id: str | None = None, **config: Any) -> ScriptedModel:
        """The script for `agent_id` (or the file's only script) from a JSON or YAML file."""
        turns = select_script(load_script_file(path), agent_id)
        return cls(turns, name=agent_id or Path(path).stem, **config)
