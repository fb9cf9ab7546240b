"""What can be known wrong before a session exists: provider names, tools that cannot run here, template
names that are neither an input nor a context name at their place, `steps[n]` read before step n ran, a real
provider whose package or credential is missing, and a tool module that fails to import.

`strands run` refuses on these before creating a session (`check_before_session`, `check_imports`); `strands
validate` prints the same findings as warnings (`findings`). Only `check_imports` imports strands-agents.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from strands_durable.errors import DurableError, ExitCode, SpecError, Unsupported, UsageError
from strands_durable.runner.patterns.places import template_places
from strands_durable.spec.diagnostics import did_you_mean, near_miss
from strands_durable.spec.templates import constant_indexes, referenced_names


@dataclass(frozen=True)
class Finding:
    """One thing that would stop the run: `kind` is provider, variable, steps or tool."""

    kind: str
    where: str
    detail: str
    name: str = ""
    near_miss: str | None = None  # what `name` likely misspells (`topci` -> `topic`)

    @property
    def exit_code(self) -> ExitCode:
        return {"steps": ExitCode.SPEC_INVALID, "tool": ExitCode.UNSUPPORTED}.get(self.kind, ExitCode.USAGE)


@dataclass(frozen=True)
class Allowances:
    """What the run allows its tools: Python tools added by the caller, `--allow-python-exec`, `--network`."""

    extra_tools: frozenset[str] = frozenset()
    python_exec: bool = False
    network: bool = False

    @classmethod
    def of(cls, options: Any) -> Allowances:
        return cls(frozenset(options.extra_tools), options.allow_python_exec, options.network)


def findings(
    spec: Any, inputs: Iterable[str], *, provider: str | None = None, allow: Allowances = Allowances()
) -> list[Finding]:
    """Every finding of `spec` run with these input names, this provider override (None: the spec's own) and
    these allowances."""
    found = [*_provider_findings(spec, provider), *_template_findings(spec, frozenset(inputs))]
    found.extend(_tool_findings(spec, provider, allow))
    return list(dict.fromkeys(found))


def check_before_session(spec: Any, variables: dict[str, Any], options: Any) -> None:
    """Raise the first kind of finding of a run with these RunOptions as its error (usage 2, spec 3, unsupported
    18), every name in one line."""
    found = findings(spec, variables, provider=options.provider, allow=Allowances.of(options))
    for kind in ("provider", "steps", "variable", "tool"):  # a defect of the file first: no --var fixes it
        group = [f for f in found if f.kind == kind]
        if group:
            raise _error(spec, kind, group)


def _error(spec: Any, kind: str, group: list[Finding]) -> DurableError:
    if kind == "variable":
        names = list(dict.fromkeys(f.name for f in group))
        places = "; ".join(f"'{f.name}' at {f.where}" for f in group[:3]) + ("; ..." if len(group) > 3 else "")
        flags = " ".join(f"--var {name}=..." for name in names)
        misses = {f.name: f.near_miss for f in group if f.near_miss}
        guess = ", ".join(f"'{close}'" + (f" for '{name}'" if len(names) > 1 else "") for name, close in misses.items())
        advice = f"did you mean {guess}? Otherwise pass {flags}" if misses else f"pass {flags}"
        return UsageError(
            f"Template variable(s) {', '.join(names)} are neither inputs nor context names ({places}): {advice}"
        )
    first = group[0]
    if kind == "steps":
        return SpecError(str(spec.source_path or "<spec>"), first.detail, key_path=first.where)
    if kind == "tool":
        return Unsupported(first.detail)
    return UsageError(first.detail)


def _provider_findings(spec: Any, override: str | None) -> Iterator[Finding]:
    from strands_durable.models.providers import PROVIDERS

    choices = ", ".join(PROVIDERS)
    if override is not None:
        candidates = [("--provider", override)]
    else:
        candidates = [("runtime.provider", spec.runtime.provider)]
        candidates += [(f"agents.{a}.provider", agent.provider) for a, agent in spec.agents.items() if agent.provider]
    for where, name in candidates:
        if name not in PROVIDERS:
            hint = did_you_mean(name, list(PROVIDERS))
            yield Finding("provider", where, f"unknown provider '{name}' ({where}){hint}; use one of: {choices}", name)


def _template_findings(spec: Any, inputs: frozenset[str]) -> Iterator[Finding]:
    for place in template_places(spec):
        for name in sorted(referenced_names(place.template, condition=place.condition) - place.names - inputs):
            close = near_miss(name, sorted(place.names | inputs))
            hint = f" (did you mean '{close}'?)" if close else ""
            detail = f"template variable '{name}' at {place.where} is neither an input nor a context name{hint}"
            yield Finding("variable", place.where, detail, name, close)
        if place.steps_before is None:
            continue
        for index in sorted(constant_indexes(place.template, "steps", condition=place.condition)):
            if index >= place.steps_before:
                detail = (
                    f"{place.where} reads steps[{index}], which does not exist yet there "
                    f"(only steps[0]..steps[{place.steps_before - 1}])"
                    if place.steps_before
                    else f"{place.where} reads steps[{index}] before any step ran"
                )
                yield Finding("steps", place.where, detail, "steps")


def _resolver(spec: Any, override: str | None, allow: Allowances) -> Any:
    """A ToolResolver that locates tools without building any (native tools by name only)."""
    from strands_durable.runner.native_tools import NATIVE_TOOL_NAMES
    from strands_durable.runner.tools import ToolResolver

    return ToolResolver(
        spec,
        provider=override or spec.runtime.provider,
        native=dict.fromkeys(NATIVE_TOOL_NAMES),
        extra=dict.fromkeys(allow.extra_tools),
        allow_python_exec=allow.python_exec,
        network=allow.network,
    )


def unknown_tools(spec: Any, *, allow: Allowances = Allowances()) -> dict[str, str]:
    """Tool names agents give that nothing defines (a run leaves them out with a warning), with where."""
    return _resolver(spec, None, allow).unknown_names()


def _agent_tool_sets(spec: Any) -> Iterator[tuple[str, list[str] | None]]:
    """Each (agent, tool names given at that place; None: its own) the pattern runs, once."""
    seen: set[tuple[str, tuple[str, ...] | None]] = set()
    for place in template_places(spec):
        if place.agent is None or (place.agent, place.tools) in seen:
            continue
        seen.add((place.agent, place.tools))
        yield place.agent, None if place.tools is None else list(place.tools)


def _tool_findings(spec: Any, override: str | None, allow: Allowances) -> Iterator[Finding]:
    resolver = _resolver(spec, override, allow)
    for agent, tools in _agent_tool_sets(spec):
        for name in resolver.names_for(agent, tools):
            try:
                resolver.locate(name, agent)
            except Unsupported as exc:
                yield Finding("tool", f"agents.{agent}.tools", str(exc), name)


def check_imports(spec: Any, options: Any) -> None:
    """Import what the run will import, and let the first failure out before a session exists: the model of every
    agent with a real provider (a provider package that is not installed: Unsupported, exit 18; a missing
    credential: WorkflowFailed, exit 10) and every tool named by module (one that fails to import or lacks the
    function: Unsupported, exit 18). Offline models always build, and a caller's `model_factory` brings its own
    models; both are left alone."""
    from strands_durable.models.digest import canonical_json
    from strands_durable.models.providers import build_model
    from strands_durable.runner.context import model_arguments
    from strands_durable.runner.tool_imports import import_tool
    from strands_durable.runner.tools import OFFLINE_PROVIDERS

    built: set[str] = set()
    resolver = _resolver(spec, options.provider, Allowances.of(options))
    for agent_id, tools in _agent_tool_sets(spec):
        provider, model_id, runtime = model_arguments(spec, options, agent_id)
        key = canonical_json([provider, model_id, runtime])
        if options.model_factory is None and provider not in OFFLINE_PROVIDERS and key not in built:
            build_model(provider, model_id=model_id, runtime=runtime, seed=options.seed, agent_id=agent_id)
            built.add(key)
        for name in resolver.names_for(agent_id, tools):
            kind, ref, _idempotent = resolver.locate(name, agent_id)
            if kind == "import":
                import_tool(ref, f"agents.{agent_id}.tools", resolver.spec_dir)


def warn_undeclared_vars(spec: Any, options: Any) -> None:
    """A `--var` naming no declared input is passed to the templates as given, with a warning naming it."""
    from strands_durable.spec import parse_cli_vars

    declared = spec.inputs.declared()
    for name in parse_cli_vars(options.cli_vars):
        if name not in declared and name not in spec.inputs.values:
            options.reporter.warning(
                f"--var {name}: '{name}' is not declared in inputs; it is passed to templates as given"
            )


__all__ = [
    "Allowances",
    "Finding",
    "check_before_session",
    "check_imports",
    "findings",
    "unknown_tools",
    "warn_undeclared_vars",
]
