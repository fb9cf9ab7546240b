"""A warm resume (issue 37 item 2): what a resume rebuilds per crash point and need not is worked out once per
workflow and shared (the parsed spec, already shared by `spec.loader`; what the spec's tools are), while every run
still builds its own tools, agents and session, so nothing carries state from one point to the next."""

from __future__ import annotations

from pathlib import Path

from strands_durable.runner.native_tools import native_tools
from strands_durable.runner.tools import ToolResolver
from strands_durable.spec import load_spec
from tests.conftest import EXAMPLES


def _resolver(spec, scratch: Path) -> ToolResolver:
    return ToolResolver(spec, provider="synthetic", native=native_tools(), workdir=scratch)


def test_the_tool_facts_of_a_spec_are_worked_out_once_and_each_run_builds_its_own_tools(tmp_path: Path) -> None:
    spec = load_spec(EXAMPLES / "chain-research.strands.yaml")
    assert load_spec(EXAMPLES / "chain-research.strands.yaml") is spec  # the parsed spec is shared (the loader)
    first, second = _resolver(spec, tmp_path / "a"), _resolver(spec, tmp_path / "b")
    assert second.entries is first.entries and second.spec_dir == first.spec_dir == EXAMPLES.resolve()
    unknown = first.unknown_names()
    unknown["not-a-tool"] = "changed by the caller"  # what a run is given is its own copy
    assert second.unknown_names() == {} and "not-a-tool" not in first.unknown_names()
    agent = next(iter(spec.agents))
    tools_a, tools_b = first.for_agent(agent).tools, second.for_agent(agent).tools
    assert tools_a and len(tools_a) == len(tools_b)
    assert tools_a is not tools_b  # each run gets its own tool list (built as before the cache)


def test_a_changed_spec_object_gets_its_own_tool_facts(tmp_path: Path) -> None:
    spec = load_spec(EXAMPLES / "chain-research.strands.yaml")
    other = load_spec(EXAMPLES / "routing-support-triage.strands.yaml")
    assert _resolver(other, tmp_path).entries is not _resolver(spec, tmp_path).entries
