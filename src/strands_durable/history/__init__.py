"""Pure functions over Strands/Converse message histories: validate against provider rules, repair, normalise.

No I/O and no strands-agents import: the store, the durable agent and the CLI all use these on plain lists.
"""

from __future__ import annotations

from .normalize import VOLATILE_MESSAGE_KEYS, normalize
from .repair import Strategy, repair, synthesized_ids
from .rules import PROFILES, RULES, Rule, rules_for
from .types import (
    METADATA_KEY,
    OUTCOME_UNKNOWN,
    SDK_INTERRUPTED_TEXT,
    SEPARATOR_TEXT,
    SYNTHESIZED_RESULT_TEXT,
    MalformedHistory,
    RepairAction,
    RepairKind,
    Violation,
)
from .validate import Mode, check_reasoning_preserved, validate, validate_stored_indices

__all__ = [
    "METADATA_KEY",
    "OUTCOME_UNKNOWN",
    "PROFILES",
    "RULES",
    "SDK_INTERRUPTED_TEXT",
    "SEPARATOR_TEXT",
    "SYNTHESIZED_RESULT_TEXT",
    "VOLATILE_MESSAGE_KEYS",
    "MalformedHistory",
    "Mode",
    "RepairAction",
    "RepairKind",
    "Rule",
    "Strategy",
    "Violation",
    "check_reasoning_preserved",
    "normalize",
    "repair",
    "rules_for",
    "synthesized_ids",
    "validate",
    "validate_stored_indices",
]
