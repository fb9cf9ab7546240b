"""Tools a spec names, from the user's side: a `module:function` beside the spec imports from any working
directory, or fails before a session exists with the module's own error and where modules are looked up; a tool
name nothing defines is left out with one warning, as strands-cli leaves it out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

TOOL_MODULE = '''\
from strands import tool
{extra_import}

@tool
def shout(text: str) -> str:
    """Say the text louder."""
    return text.upper() + "!"
'''

SPEC = """\
version: 0
name: beside
runtime: {{provider: scripted, model_id: {script}}}
tools:
  python: ["{ref}"]
agents:
  writer:
    prompt: You write.
    tools: [{short}]
pattern:
  type: chain
  config:
    steps:
      - agent: writer
        input: "Say hello."
"""


def _spec_beside_module(tmp_path: Path, *, ref: str = "loud_tools:shout", extra_import: str = "") -> Path:
    """`specs/spec.yaml` with `specs/loud_tools.py` beside it and a script whose agent calls the tool once."""
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "loud_tools.py").write_text(TOOL_MODULE.format(extra_import=extra_import), encoding="utf-8")
    script = specs / "script.json"
    script.write_text(json.dumps([[{"name": "shout", "input": {"text": "hello"}}], "Said it."]), encoding="utf-8")
    spec = specs / "spec.yaml"
    spec.write_text(SPEC.format(script=script, ref=ref, short=ref.partition(":")[2]), encoding="utf-8")
    return spec


def test_a_module_tool_beside_the_spec_runs_from_another_working_directory(strands, tmp_path):
    spec = _spec_beside_module(tmp_path)
    result = strands("run", spec, "--out", "out")  # the working directory is tmp_path, not the spec's
    assert result.returncode == 0, result.stderr
    session_id = result.stdout.splitlines()[0].removeprefix("Session ID: ")
    exported = json.loads(strands("sessions", "export", session_id).stdout)
    assert [r["content"] for r in exported["journal"]["writer"]] == [[{"text": "HELLO!"}]]


@pytest.mark.parametrize(
    ("ref", "extra_import", "reason"),
    [
        (
            "loud_tools:shout",
            "import a_dependency_nobody_installed",
            "importing loud_tools ({dir}/loud_tools.py) raised ModuleNotFoundError: "
            "No module named 'a_dependency_nobody_installed'",
        ),
        ("loud_tools:shout", "def broken(:", "importing loud_tools ({dir}/loud_tools.py) raised SyntaxError: "),
        ("loud_tools:whisper", "", "module 'loud_tools' ({dir}/loud_tools.py) has no attribute 'whisper'"),
        ("quiet_tools:shout", "", "no module named 'quiet_tools'"),
    ],
    ids=["missing dependency", "syntax error", "no such function", "no such module"],
)
def test_a_module_tool_that_cannot_be_imported_says_why_and_where_before_a_session(
    strands, tmp_path, ref, extra_import, reason
):
    spec = _spec_beside_module(tmp_path, ref=ref, extra_import=extra_import)
    result = strands("run", spec, "--out", "out")
    assert result.returncode == 18, result.stderr
    (line,) = result.stderr.splitlines()
    folder = spec.parent.resolve()
    assert line.startswith(f"Error: tool '{ref}' (agents.writer.tools) cannot be imported: ")
    assert reason.format(dir=folder) in line
    assert line.endswith(f"(modules are looked up on the Python path and in the spec's directory {folder})")
    assert strands("sessions", "list").stdout == "No sessions found.\n"


UNKNOWN_TOOL_SPEC = """\
version: 0
name: lenient
runtime: {provider: synthetic}
agents:
  researcher:
    prompt: You research.
    tools: [http_executors, calculator]
pattern:
  type: chain
  config:
    steps:
      - agent: researcher
        input: "Find one fact."
      - agent: researcher
        input: "Find another."
"""


def test_a_tool_name_nothing_defines_is_left_out_with_one_warning_as_in_strands_cli(strands, write_spec):
    spec = write_spec(UNKNOWN_TOOL_SPEC)
    warning = (
        "Warning: tool 'http_executors' (agents.researcher.tools) is defined nowhere (not a native tool, a "
        "tools.python entry, an HTTP executor or an MCP server): the agent runs without it, as in strands-cli"
    )
    result = strands("run", spec, "--out", "out")
    assert result.returncode == 0, result.stderr
    assert "✓ Workflow complete" in result.stdout
    assert result.stderr.splitlines() == [warning]
    validated = strands("validate", spec)
    assert validated.returncode == 0 and validated.stderr.splitlines() == [warning]
