"""`$ref` agents resolve against the spec's directory as written; links, absolute paths, cycles refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from strands_durable.errors import SpecError
from strands_durable.spec import load_spec

AGENT_FILE = """\
version: 0
name: helper
runtime: {provider: synthetic}
agents:
  helper:
    prompt: "Help with {{ topic }}"
    model_id: small
    inference: {temperature: 0.1, max_tokens: 100}
    output_schema: ./schemas/out.json
pattern:
  type: chain
  config:
    steps: [{agent: helper}]
"""


def main_spec(ref: str, extra: str = "") -> str:
    return f"""\
version: 0
name: main
runtime: {{provider: synthetic}}
agents:
  helper:
    $ref: {ref}
{extra}pattern:
  type: chain
  config:
    steps: [{{agent: helper}}]
"""


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "helper.yaml").write_text(AGENT_FILE)
    (tmp_path / "specs").mkdir()
    return tmp_path


def refused(path: Path) -> SpecError:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return info.value


def test_ref_through_parent_directory_as_written(layout):
    spec_path = layout / "specs" / "main.yaml"
    spec_path.write_text(main_spec("../agents/helper.yaml", "    inference: {temperature: 0.9}\n"))
    agent = load_spec(spec_path).agents["helper"]
    assert agent.prompt == "Help with {{ topic }}"
    assert (agent.inference.temperature, agent.inference.max_tokens) == (0.9, 100)
    assert agent.output_schema == str(layout / "agents" / "schemas" / "out.json")


def test_bare_agent_file(layout):
    (layout / "agents" / "bare.yaml").write_text("prompt: Just me.\ntools: [calculator]\n")
    spec_path = layout / "specs" / "main.yaml"
    spec_path.write_text(main_spec("../agents/bare.yaml"))
    assert load_spec(spec_path).agents["helper"].tools == ["calculator"]


@pytest.mark.parametrize(
    ("ref", "detail"),
    [
        ("/etc/passwd.yaml", "must be a path relative to the spec file"),
        ("~/agent.yaml", "must be a path relative to the spec file"),
        ("../agents/missing.yaml", "names no file"),
        ("../agents/helper.txt", "must name a .yaml, .yml or .json file"),
        ("''", "`$ref` is empty"),
    ],
)
def test_unusable_refs(layout, ref, detail):
    spec_path = layout / "specs" / "main.yaml"
    spec_path.write_text(main_spec(ref))
    error = refused(spec_path)
    assert detail in error.detail
    assert (error.key_path, error.line) == ("agents.helper.$ref", 6)


def test_symlinked_directory_in_ref_is_refused(layout, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "evil.yaml").write_text(AGENT_FILE)
    os.symlink(outside, layout / "specs" / "linked")
    spec_path = layout / "specs" / "main.yaml"
    spec_path.write_text(main_spec("linked/evil.yaml"))
    assert "symlink" in refused(spec_path).detail


def test_symlinked_file_in_ref_is_refused(layout):
    os.symlink(layout / "agents" / "helper.yaml", layout / "specs" / "helper.yaml")
    spec_path = layout / "specs" / "main.yaml"
    spec_path.write_text(main_spec("helper.yaml"))
    assert "symlink" in refused(spec_path).detail


def test_spec_reached_through_a_symlinked_directory_still_resolves(layout, tmp_path_factory):
    link = tmp_path_factory.mktemp("links") / "project"
    os.symlink(layout, link)
    (layout / "specs" / "main.yaml").write_text(main_spec("../agents/helper.yaml"))
    assert load_spec(link / "specs" / "main.yaml").agents["helper"].model_id == "small"


def test_ref_cycle_is_refused(layout):
    a = layout / "agents" / "a.yaml"
    b = layout / "agents" / "b.yaml"
    a.write_text(main_spec("b.yaml"))
    b.write_text(main_spec("a.yaml"))
    assert "cycle" in refused(a).detail


def test_error_inside_referenced_file_names_that_file(layout):
    (layout / "agents" / "helper.yaml").write_text(AGENT_FILE.replace("model_id: small", "modle_id: small"))
    spec_path = layout / "specs" / "main.yaml"
    spec_path.write_text(main_spec("../agents/helper.yaml"))
    error = refused(spec_path)
    assert error.file.endswith("helper.yaml") and error.key_path == "agents.helper.modle_id"


def test_override_with_unknown_key_points_at_the_main_file(layout):
    spec_path = layout / "specs" / "main.yaml"
    spec_path.write_text(main_spec("../agents/helper.yaml", "    colour: blue\n"))
    error = refused(spec_path)
    assert (error.file, error.key_path, error.line) == (str(spec_path), "agents.helper.colour", 7)
