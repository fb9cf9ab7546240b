"""Workflow specs in the strands-cli v0 format: load (YAML/JSON, safely), validate, resolve inputs, render.

This package knows YAML, pydantic and Jinja2, and nothing about running; it never imports strands-agents,
so `strands validate` stays fast.
"""

from __future__ import annotations

from strands_durable.spec.loader import (
    bytes_hash,
    load_spec,
    load_spec_bytes,
    load_spec_text,
    read_spec_bytes,
    spec_hash,
)
from strands_durable.spec.models import Agent, PythonToolEntry, Spec
from strands_durable.spec.patterns import PATTERN_TYPES
from strands_durable.spec.templates import check_syntax, evaluate_condition, render
from strands_durable.spec.variables import parse_cli_vars, resolve_variables

__all__ = [
    "PATTERN_TYPES",
    "Agent",
    "PythonToolEntry",
    "Spec",
    "bytes_hash",
    "check_syntax",
    "evaluate_condition",
    "load_spec",
    "load_spec_bytes",
    "load_spec_text",
    "parse_cli_vars",
    "read_spec_bytes",
    "render",
    "resolve_variables",
    "spec_hash",
]
