"""Resolve the tools a spec gives an agent into real Strands tools, refusing clearly what we cannot provide."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from strands_durable.errors import Unsupported
from strands_durable.runner.native_tools import NETWORK_TOOLS, UNAVAILABLE_TOOLS

OFFLINE_PROVIDERS = frozenset({"synthetic", "scripted"})
IDEMPOTENT_ATTRIBUTE = "__strands_idempotent__"


def non_idempotent(func: Any) -> Any:
    """Mark a Python tool as non-idempotent: if a crash hides whether it ran, it is not run again."""
    setattr(func, IDEMPOTENT_ATTRIBUTE, False)
    inner = getattr(func, "_tool_func", None)
    if inner is not None:
        setattr(inner, IDEMPOTENT_ATTRIBUTE, False)
    return func


@dataclass
class ToolSet:
    tools: list[Any] = field(default_factory=list)
    non_idempotent: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Entry:
    name: str  # how agents refer to it
    ref: str  # short name or callable path
    idempotent: bool


def _entries(spec: Any) -> dict[str, _Entry]:
    entries: dict[str, _Entry] = {}
    for item in spec.tools.python:
        if isinstance(item, str):
            ref, idempotent = item, True
        else:
            ref, idempotent = item.callable, item.idempotent
        short = ref.replace(":", ".").rsplit(".", 1)[-1]
        entry = _Entry(short, ref, idempotent)
        entries[ref] = entry
        entries.setdefault(short, entry)
    return entries


class ToolResolver:
    """Builds each agent's tools once per run (native tools share the run's clock and scratch directory)."""

    def __init__(self, spec: Any, *, provider: str, native: dict[str, Any], extra: dict[str, Any] | None = None):
        self.spec = spec
        self.offline = provider in OFFLINE_PROVIDERS
        self.native = native
        self.extra = extra or {}
        self.entries = _entries(spec)
        self.http_ids = {h.id for h in spec.tools.http_executors}
        self.mcp_ids = {m.id for m in spec.tools.mcp}

    def for_agent(self, agent_id: str, names: list[str] | None = None) -> ToolSet:
        agent = self.spec.agents[agent_id]
        if names is None:
            names = agent.tools
        if names is None:  # no `tools:` key: every tool the spec declares
            names = [e.ref for e in dict.fromkeys(self.entries.values())]
        tools: list[Any] = []
        risky: set[str] = set()
        for name in names:
            tool, idempotent = self._resolve(name, agent_id)
            tools.append(tool)
            if not idempotent:
                risky.add(_tool_name(tool))
        return ToolSet(tools, frozenset(risky))

    def _resolve(self, name: str, agent_id: str) -> tuple[Any, bool]:
        where = f"agents.{agent_id}.tools"
        if name in self.extra:
            tool = self.extra[name]
            declared = self.entries.get(name)
            return tool, is_idempotent(tool) and (declared is None or declared.idempotent)
        if name in self.http_ids:
            raise Unsupported(f"HTTP executor tool '{name}' ({where}) is not supported yet")
        if name in self.mcp_ids:
            raise Unsupported(f"MCP server tool '{name}' ({where}) is not supported yet")
        entry = self.entries.get(name) or _Entry(name, name, True)
        short = entry.ref.replace(":", ".").rsplit(".", 1)[-1] if "." in entry.ref or ":" in entry.ref else entry.ref
        if entry.ref == short or entry.ref == f"strands_tools.{short}":
            if short in self.native:
                return self.native[short], entry.idempotent
            if short in NETWORK_TOOLS:
                return self._network_tool(short, where), entry.idempotent
            if short in UNAVAILABLE_TOOLS:
                raise Unsupported(f"tool '{short}' ({where}) is not available: {UNAVAILABLE_TOOLS[short]}")
            if entry.ref == short:
                raise Unsupported(f"unknown tool '{short}' ({where})")
        tool = _import_callable(entry.ref, where)
        return tool, entry.idempotent and is_idempotent(tool)

    def _network_tool(self, name: str, where: str) -> Any:
        if self.offline:
            raise Unsupported(f"tool '{name}' ({where}) needs the network; offline runs refuse network tools")
        module = NETWORK_TOOLS[name]
        if module is None:
            raise Unsupported(f"tool '{name}' ({where}) is not supported yet")
        return _import_callable(module, where)


def _tool_name(tool: Any) -> str:
    name = getattr(tool, "tool_name", None)
    if name:
        return str(name)
    spec = getattr(tool, "TOOL_SPEC", None)
    if isinstance(spec, dict):
        return str(spec.get("name"))
    return str(getattr(tool, "__name__", tool))


def is_idempotent(tool: Any) -> bool:
    for candidate in (tool, getattr(tool, "_tool_func", None)):
        if candidate is not None and getattr(candidate, IDEMPOTENT_ATTRIBUTE, True) is False:
            return False
    return True


def _import_callable(ref: str, where: str) -> Any:
    """Import "module:function", dotted "module.function" or a module that defines a TOOL_SPEC."""
    if ":" in ref:
        module_name, _, attr = ref.partition(":")
        candidates = [(module_name, attr)]
    else:
        candidates = [(ref, None)]
        if "." in ref:
            module_name, _, attr = ref.rpartition(".")
            candidates.insert(0, (module_name, attr))
    for module_name, attr in candidates:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if attr is None:
            return module
        obj = getattr(module, attr, None)
        if obj is None:
            try:
                return importlib.import_module(f"{module_name}.{attr}")
            except ImportError:
                continue
        return _as_tool(obj)
    raise Unsupported(f"tool '{ref}' ({where}) cannot be imported")


def _as_tool(obj: Any) -> Any:
    if hasattr(obj, "tool_name") or hasattr(obj, "TOOL_SPEC"):
        return obj
    if callable(obj):
        from strands import tool

        wrapped = tool(obj)
        if getattr(obj, IDEMPOTENT_ATTRIBUTE, True) is False:
            non_idempotent(wrapped)
        return wrapped
    return obj
