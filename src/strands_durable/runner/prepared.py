"""A warm resume: what every resume of one workflow's session reads and none changes, built once (`prepare`)
and handed to `resume(..., prepared=...)` by a caller that resumes the same session many times (the chaos
explorer resumes it two or three times per crash point). `strands run --resume` builds nothing ahead: a resume
without it reads and derives everything itself, as before.

Reused, and why none of it can carry state from one resume to the next:
- the resolved session id: a string;
- the parsed spec, as read from the spec file when prepared (`spec_path`, `spec_hash`): a frozen pydantic model
  (the spec loader shares the same object between resumes already). A session whose recorded spec path or hash
  differs is resumed from its own spec, as without a prepared workflow;
- the `ToolCatalog` (runner/tools.py): the spec's tool entries and ids, frozen; each run still builds its own
  `ToolResolver` around it, which owns what a run starts (MCP servers, HTTP executor tools) and where (its
  scratch directory and file layer);
- the skills' directories and which tool names nothing defines (the run's warnings): values computed from the
  spec and the names of the caller's tools, read-only mappings;
- the committed (unit, agent) pairs already found in the spec (`found_positions`): facts about the frozen spec;
- the native tools were already built once per process (runner/native_tools.py): they read everything of a run
  from the agent call's `invocation_state`, which each run builds anew.

Built fresh by every resume, prepared or not: the store's session (its lease is taken by the open and released
by the close or the abandon), its state, the `RunContext`, the invoker, every agent and its conversation, the
conversation managers, the models (a model is a few attribute assignments, and the chaos kit wraps each in the
run's own request log), the tools' environment (clock, scratch directory, file layer), the budget and the retry
policy, the cancellation event, the telemetry and the secrets (read from the environment at each resume).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from strands_durable.runner.tools import ToolCatalog


@dataclass(frozen=True)
class PreparedWorkflow:
    """The read-only part of resuming `session_id`, built once by `prepare`."""

    session_id: str
    spec_path: str  # as sessions record it (`meta["spec_path"]`)
    spec_hash: str  # the sha256 of the bytes `spec` was parsed from
    spec: Any
    tools: ToolCatalog
    skills: Mapping[str, Path]
    _unknown: dict[frozenset[str], Mapping[str, str]] = field(default_factory=dict, compare=False, repr=False)
    # the committed (unit, agent) pairs found in `spec` so far (`check_committed_positions`' memo)
    found_positions: set[tuple[str, str | None]] = field(default_factory=set, compare=False, repr=False)

    def serves(self, session_id: str, meta: Mapping[str, Any]) -> bool:
        """Whether a resume of `session_id`, whose recorded metadata is `meta`, may use this: the same session,
        created from the spec file this was prepared from, with the same bytes."""
        return (
            session_id == self.session_id
            and meta.get("spec_path") == self.spec_path
            and meta.get("spec_hash") == self.spec_hash
        )

    def unknown_tool_names(self, extra: Mapping[str, Any], native: Mapping[str, Any]) -> Mapping[str, str]:
        """`ToolResolver.unknown_names` for a run given the caller's tools `extra` (a pure function of the spec and
        the names of `extra` and `native`: computed once per set of names)."""
        from strands_durable.runner.tools import ToolResolver

        names = frozenset(extra) | frozenset(f"\x00{name}" for name in native)
        found = self._unknown.get(names)
        if found is None:
            resolver = ToolResolver(self.spec, provider="", native=dict(native), extra=dict(extra), catalog=self.tools)
            found = self._unknown[names] = MappingProxyType(resolver.unknown_names())
        return found


def prepare(session_id: str, spec_path: str | Path) -> PreparedWorkflow:
    """Read and parse the spec file the session `session_id` (a full id) was created from, once, with what a
    resume derives from it alone. SpecError (exit 3) as `load_spec` raises it."""
    from strands_durable.runner.skills import skill_directories
    from strands_durable.spec import bytes_hash, load_spec_bytes, read_spec_bytes

    raw = read_spec_bytes(spec_path)
    spec = load_spec_bytes(raw, spec_path)
    return PreparedWorkflow(
        session_id=session_id,
        spec_path=str(spec.source_path),
        spec_hash=bytes_hash(raw),
        spec=spec,
        tools=ToolCatalog.of(spec),
        skills=MappingProxyType(skill_directories(spec)),
    )
