"""The model layer: deterministic `synthetic` and `scripted` models, real providers, pattern contracts.

Names are imported lazily, so `import strands_durable.models.contracts` (used by the runner and CLI) never
imports strands.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Contract": "contracts",
    "ContractError": "contracts",
    "Evaluation": "contracts",
    "detect_contract": "contracts",
    "instruction_for": "contracts",
    "strip_instructions": "contracts",
    "evaluation_instruction": "contracts",
    "parse_evaluation": "contracts",
    "parse_route": "contracts",
    "parse_task_list": "contracts",
    "route_instruction": "contracts",
    "task_list_instruction": "contracts",
    "ModelRequest": "request",
    "Answer": "answer",
    "ToolCall": "answer",
    "Usage": "answer",
    "PolicyModel": "base",
    "StreamFault": "events",
    "StreamCut": "events",
    "SyntheticPolicy": "synthetic_policy",
    "SyntheticModel": "synthetic",
    "ScriptedModel": "scripted",
    "PromptScriptedModel": "prompt_scripted",
    "ScriptedPolicy": "scripted",
    "ScriptError": "scripted",
    "ScriptExhausted": "scripted",
    "build_model": "providers",
    "PROVIDERS": "providers",
    "value_for_schema": "schema_values",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
