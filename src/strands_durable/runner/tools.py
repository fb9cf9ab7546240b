"""Resolve the tools a spec gives an agent into real Strands tools, refusing clearly what we cannot provide."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from strands_durable.errors import Unsupported
from strands_durable.runner.marks import IDEMPOTENT_ATTRIBUTE
from strands_durable.runner.native_tools import NATIVE_TOOL_NAMES, NETWORK_TOOLS
from strands_durable.runner.python_exec import ALLOW_FLAG
from strands_durable.runner.skills import SKILL_TOOL, SKILL_TOOL_NAMES, skills_prompt
from strands_durable.runner.tool_imports import check_findable, import_tool

OFFLINE_PROVIDERS = frozenset({"synthetic", "scripted"})
NOTES_MANAGER = "notes_manager"


class DirectNetwork:
    """How tools reach the network in a real run: directly. A chaos cassette (faults/kit/cassette.py) replaces it
    with one that records or replays; both offer `wrap(tool)` and `server_tools(server_id, connect)`."""

    def wrap(self, tool: Any) -> Any:
        return tool

    def server_tools(self, server_id: str, connect: Any) -> list[Any]:
        """The tools of an MCP server reached over HTTP (`connect()` connects and lists them)."""
        return list(connect())


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


@dataclass(frozen=True)
class ToolCatalog:
    """What a spec declares about its tools, derived from the spec alone (`of`): the `tools.python` entries, the
    HTTP executor and MCP server ids, the guardrails and the directory module tools are imported beside.

    A warm resume (runner/prepared.py) builds it once per workflow and every run's `ToolResolver` reads it: it is
    frozen and its values are immutable (frozensets, a read-only mapping), so no run can leave anything in it for
    the next.
    """

    entries: Mapping[str, _Entry]  # read-only
    spec_dir: Path | None  # module tools beside the spec file
    http_ids: frozenset[str]
    mcp_ids: frozenset[str]
    mcp_urls: frozenset[str]  # MCP servers reached over HTTP
    deny_network: bool
    allowed: frozenset[str] | None  # security.guardrails.allow_tools (None: every tool)

    @classmethod
    def of(cls, spec: Any) -> ToolCatalog:
        source = getattr(spec, "source_path", None)
        guardrails = spec.security.guardrails if spec.security is not None else None
        allowed = guardrails.allow_tools if guardrails is not None else None
        return cls(
            entries=MappingProxyType(_entries(spec)),
            spec_dir=Path(source).resolve().parent if source is not None else None,
            http_ids=frozenset(h.id for h in spec.tools.http_executors),
            mcp_ids=frozenset(m.id for m in spec.tools.mcp),
            mcp_urls=frozenset(m.id for m in spec.tools.mcp if getattr(m, "url", None)),
            deny_network=bool(guardrails is not None and guardrails.deny_network),
            allowed=None if allowed is None else frozenset(allowed),
        )


class ToolResolver:
    """Builds each agent's tools once per run (native tools share the run's clock and scratch directory). What it
    reads of the spec comes from a `ToolCatalog` (`catalog`, a warm resume's; else derived here); what it starts
    (MCP servers, HTTP executor tools) and where (`workdir`, `fileops`) belong to this run."""

    def __init__(
        self,
        spec: Any,
        *,
        provider: str,
        native: dict[str, Any],
        extra: dict[str, Any] | None = None,
        allow_python_exec: bool = False,
        network: bool = False,
        network_tools: Any = None,
        workdir: Path | None = None,
        fileops: Any = None,
        catalog: ToolCatalog | None = None,
    ):
        catalog = catalog or ToolCatalog.of(spec)
        self.spec = spec
        self.offline = provider in OFFLINE_PROVIDERS and not network
        self.network_tools = network_tools or DirectNetwork()  # chaos: the cassette (faults/kit/cassette.py)
        self.allow_python_exec = allow_python_exec
        self.native = native
        self.extra = extra or {}
        self.entries = catalog.entries
        self.spec_dir = catalog.spec_dir
        self.http_ids = catalog.http_ids
        self._http_tools: dict[str, Any] = {}
        self.mcp_ids = catalog.mcp_ids
        self.mcp_urls = catalog.mcp_urls
        self._mcp: Any = None  # McpServers, created when an agent first needs an MCP server
        self.workdir = workdir  # where stdio MCP servers run (the scratch directory under an offline model)
        self.fileops = fileops
        self.deny_network = catalog.deny_network
        self.allowed = catalog.allowed

    def names_for(self, agent_id: str, names: list[str] | None = None) -> list[str]:
        """The tool names an agent gets: `names` (overrides), else its `tools:`, else every declared tool."""
        if names is None:
            names = self.spec.agents[agent_id].tools
        policy = self.spec.context_policy
        jit = list(policy.retrieval.jit_tools) if policy and policy.retrieval else []
        if jit:  # strands-cli: context_policy.retrieval.jit_tools join every agent's tools (or are its tools)
            names = jit if names is None else [*names, *(t for t in jit if t not in names)]
        implied: list[str] = []  # tools the agent gets without naming them: allow_tools filters these out
        if names is None:  # no `tools:` key: every Python tool and HTTP executor the spec declares (strands-cli)
            names, implied = [], [e.ref for e in dict.fromkeys(self.entries.values())] + sorted(self.http_ids)
        implied += sorted(self.mcp_ids - set(names) - set(implied))  # strands-cli: every agent gets every MCP server
        if self.spec.skills and not SKILL_TOOL_NAMES & {*names, *implied}:  # strands-cli: every agent gets Skill
            implied.append(SKILL_TOOL)
        names = [*names, *(n for n in implied if self.allows(n))]
        # strands-cli has no `notes_manager` tool (its registry skips the module; notes are context_policy.notes),
        # and leaves out a name no tool defines (warned about once per run: `unknown_names`)
        return [n for n in names if n != NOTES_MANAGER and not self.defines_nothing(n)]

    def defines_nothing(self, name: str) -> bool:
        """Whether `name` is a bare tool name that nothing defines: no native or network tool, `tools.python` entry,
        HTTP executor, MCP server or tool of the caller. strands-cli runs an agent naming one without it (its
        example names `http_executors`, the key, as a tool); so do we, with a warning. A `module:function` or
        dotted name is a reference to import: that one must import (`locate`)."""
        if ":" in name or "." in name or name == NOTES_MANAGER:
            return False
        if name in self.extra or name in self.entries or name in self.http_ids or name in self.mcp_ids:
            return False
        known = NATIVE_TOOL_NAMES | NETWORK_TOOLS.keys() | SKILL_TOOL_NAMES
        return name not in self.native and name not in known

    def unknown_names(self) -> dict[str, str]:
        """Every tool name that nothing defines, with where the spec names it first (`agents.<id>.tools`, a step's
        `tool_overrides`, `context_policy.retrieval.jit_tools`)."""
        from strands_durable.runner.patterns.places import template_places

        found: dict[str, str] = {}
        policy = self.spec.context_policy
        for name in policy.retrieval.jit_tools if policy and policy.retrieval else ():
            found.setdefault(name, "context_policy.retrieval.jit_tools")
        for place in template_places(self.spec):
            if place.agent is None:
                continue
            own = place.tools is None
            where = f"agents.{place.agent}.tools" if own else f"tool_overrides of a step of agent {place.agent}"
            for name in place.tools if place.tools is not None else self.spec.agents[place.agent].tools or ():
                found.setdefault(name, where)
        return {name: where for name, where in found.items() if self.defines_nothing(name)}

    def allows(self, name: str) -> bool:
        """Whether `security.guardrails.allow_tools` (when given) lists this tool, by the name an agent uses, its
        declared reference or its short name."""
        if self.allowed is None:
            return True
        entry = self.entries.get(name)
        candidates = {name} if entry is None else {name, entry.ref, entry.name}
        if candidates & SKILL_TOOL_NAMES:
            candidates |= SKILL_TOOL_NAMES
        return bool(candidates & self.allowed)

    def for_agent(self, agent_id: str, names: list[str] | None = None) -> ToolSet:
        tools: list[Any] = []
        risky: set[str] = set()
        for name in self.names_for(agent_id, names):
            if name in self.mcp_ids:
                self.locate(name, agent_id)
                if name in self.mcp_urls:  # idempotency per tool, from its annotations
                    tools.extend(self.network_tools.server_tools(name, functools.partial(self._server_tools, name)))
                else:
                    tools.extend(self._server_tools(name))
                continue
            tool, idempotent = self._resolve(name, agent_id)
            tools.append(_as_sdk_tool(tool, name, agent_id))
            if not idempotent:
                risky.add(_tool_name(tool))
        return ToolSet(tools, frozenset(risky))

    def _refuse_offline(self, what: str) -> None:
        if self.deny_network:
            raise Unsupported(f"{what} needs the network, which security.guardrails.deny_network forbids")
        if self.offline:
            raise Unsupported(
                f"{what} needs the network; offline runs refuse network tools: pass --network to allow it "
                "(or use a real --provider)"
            )

    def _server_tools(self, server_id: str) -> list[Any]:
        return self._mcp_servers().tools(server_id)

    def _mcp_servers(self) -> Any:
        if self._mcp is None:
            from strands_durable.runner.mcp_tools import McpServers

            if self.workdir is not None and self.fileops is not None:
                self.fileops.makedirs(self.workdir)
            self._mcp = McpServers(self.spec, workdir=self.workdir)
        return self._mcp

    def close(self) -> None:
        """Stop what the run started for its tools (MCP servers)."""
        if self._mcp is not None:
            self._mcp.close()

    def _resolve(self, name: str, agent_id: str) -> tuple[Any, bool]:
        kind, ref, idempotent = self.locate(name, agent_id)
        if kind == "extra":
            tool = self.extra[name]
            return tool, is_idempotent(tool) and idempotent
        if kind == "native":
            return self.native[ref], idempotent
        if kind == "http":
            if ref not in self._http_tools:
                from strands_durable.runner.http_tools import http_executor_tool

                config = next(h for h in self.spec.tools.http_executors if h.id == ref)
                self._http_tools[ref] = self.network_tools.wrap(http_executor_tool(self.spec, config))
            return self._http_tools[ref], True
        module = NETWORK_TOOLS[ref] if kind == "network" else ref
        tool = import_tool(module, f"agents.{agent_id}.tools", self.spec_dir)
        idempotent = idempotent and is_idempotent(tool)
        return (self.network_tools.wrap(tool) if kind == "network" else tool), idempotent

    def network_tool_names(self) -> list[str]:
        """The tools the spec's agents are given that reach the network (HTTP executors, MCP servers over HTTP,
        network native tools), in order; a tool that cannot run here for another reason is not listed."""
        found: dict[str, None] = {}
        for agent_id in self.spec.agents:
            for name in self.names_for(agent_id):
                try:
                    kind, ref, _ = self.locate(name, agent_id)
                except Unsupported:
                    continue
                if kind in ("http", "network") or (kind == "mcp" and name in self.mcp_urls):
                    found[ref] = None
        return list(found)

    def locate(self, name: str, agent_id: str) -> tuple[str, str, bool]:
        """(kind, reference, idempotent) of a tool name without importing it: kind is "extra", "native", "http",
        "mcp", "network" or "import"; a tool that cannot run here raises Unsupported naming it (and how to allow it)."""
        where = f"agents.{agent_id}.tools"
        if not self.allows(name):
            raise Unsupported(f"tool '{name}' ({where}) is not in security.guardrails.allow_tools")
        declared = self.entries.get(name)
        if name in self.extra:
            return "extra", name, declared is None or declared.idempotent
        if name in self.http_ids:
            self._refuse_offline(f"HTTP executor tool '{name}' ({where})")
            return "http", name, True  # idempotency is decided per call (runner/http_tools.py)
        if name in self.mcp_ids:
            if name in self.mcp_urls:
                self._refuse_offline(f"MCP server '{name}' (tools.mcp, reached over HTTP)")
            return "mcp", name, True  # idempotency per tool, from its annotations (runner/mcp_tools.py)
        entry = declared or _Entry(name, name, True)
        short = entry.ref.replace(":", ".").rsplit(".", 1)[-1] if "." in entry.ref or ":" in entry.ref else entry.ref
        if entry.ref == short or entry.ref == f"strands_tools.{short}":
            short = SKILL_TOOL if short in SKILL_TOOL_NAMES else short
            if short == "python_exec" and not self.allow_python_exec:
                raise Unsupported(f"tool 'python_exec' ({where}) runs Python code: pass {ALLOW_FLAG} to allow it")
            if short in self.native:
                return "native", short, entry.idempotent
            if short in NETWORK_TOOLS:
                self._refuse_offline(f"tool '{short}' ({where})")
                return "network", short, entry.idempotent
            if entry.ref == short:
                raise Unsupported(f"unknown tool '{short}' ({where})")
        check_findable(entry.ref, where, self.spec_dir)
        return "import", entry.ref, entry.idempotent


def unknown_tool_text(name: str, where: str) -> str:
    """How a run and `strands validate` name a tool that nothing defines."""
    return (
        f"tool '{name}' ({where}) is defined nowhere (not a native tool, a tools.python entry, an HTTP executor or "
        "an MCP server): the agent runs without it, as in strands-cli"
    )


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


def _as_sdk_tool(tool: Any, name: str, agent_id: str) -> Any:
    """`tool` when the SDK takes it: an `AgentTool` (a `@tool` function is one) or a module of tools. The SDK leaves
    anything else out of the agent with only a log line, and the run would go on without that tool."""
    import inspect

    from strands.types.tools import AgentTool

    if isinstance(tool, AgentTool) or inspect.ismodule(tool):
        return tool
    raise Unsupported(
        f"tool '{name}' (agents.{agent_id}.tools) is not a Strands tool but a {type(tool).__name__}: give a function "
        "decorated with @tool, an AgentTool, or a module that defines TOOL_SPEC"
    )


def tool_prompt_sections(spec: Any) -> str:
    """What strands-cli appends to every agent's system prompt about the spec's tools: its skills and the
    reference of its HTTP executors ('' when it has neither)."""
    text = skills_prompt(spec)
    if spec.tools.http_executors:
        lines = ["", "# HTTP Tools Reference", ""]
        for executor in spec.tools.http_executors:
            lines.append(f"## Tool: `{executor.id}`")
            if executor.description:
                lines.append(f"**Description**: {executor.description.strip()}")
            lines.append(f"**Base URL**: `{executor.base_url}`")
            if executor.common_endpoints:
                lines.append("**Common Endpoints**:")
                lines += [f"- `{e.path}` - {e.description}" for e in executor.common_endpoints]
            if executor.authentication_info:
                lines.append(f"**Authentication**: {executor.authentication_info.strip()}")
            lines.append("")
        text += "\n\n" + "\n".join(lines)
    return text


def __getattr__(name: str) -> Any:
    """`strands_durable.runner.tools.non_idempotent`, the path README documented, for one release."""
    if name == "non_idempotent":
        from strands_durable.deprecation import moved

        return moved(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
