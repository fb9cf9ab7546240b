"""The seven patterns as small executors over units of work; each returns its artifact template context."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from strands_durable.errors import Unsupported

_EXECUTORS = {
    "chain": ("chain", "run_chain"),
    "workflow": ("workflow", "run_workflow_tasks"),
    "parallel": ("parallel", "run_parallel"),
    "routing": ("routing", "run_routing"),
    "evaluator_optimizer": ("evaluator_optimizer", "run_evaluator_optimizer"),
    "orchestrator_workers": ("orchestrator_workers", "run_orchestrator_workers"),
    "graph": ("graph", "run_graph"),
}


def executor_for(pattern_type: str) -> Callable[[Any], dict[str, Any]]:
    found = _EXECUTORS.get(pattern_type)
    if found is None:
        raise Unsupported(f"pattern '{pattern_type}' (pattern.type) is not supported")
    module, function = found
    return getattr(importlib.import_module(f"strands_durable.runner.patterns.{module}"), function)
