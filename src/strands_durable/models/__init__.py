"""The model layer: deterministic `synthetic` and `scripted` models, real providers, pattern contracts.

Names are imported lazily, so `import strands_durable.models.contracts` (used by the runner and CLI) never
imports strands.
"""

from __future__ import annotations

from strands_durable.lazy_exports import lazy_exports

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


__getattr__, __dir__ = lazy_exports(__name__, globals(), {name: f".{module}" for name, module in _EXPORTS.items()})
