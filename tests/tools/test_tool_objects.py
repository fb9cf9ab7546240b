"""A tool the SDK would not take is refused by name. Strands leaves anything that is not an `AgentTool` (or a module of
tools) out of the agent with only a log line, so a spec's Python tool that resolves to another kind of object ran
its agent without that tool and the workflow "completed". Now the run stops at that agent with exit 18 naming the
tool, and resumes once the tool is fixed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from strands_durable import LocalStore, RunOptions, resume, run_workflow
from strands_durable.errors import Unsupported, exit_code_for
from tests.tools.support import call, run_script, scripted_spec, tool_results

NOT_A_TOOL = """
class Lookup:
    tool_name = "lookup"

    def __call__(self, item: str) -> str:
        return item


lookup = Lookup()
"""
A_TOOL = '''
from strands import tool


@tool
def lookup(item: str) -> str:
    """Look an item up.

    Args:
        item: What to look up.
    """
    return f"{item}: 40 in stock"
'''


@pytest.fixture
def tool_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A module `shelf_tools` on the path, written by the test (forgotten again at the end)."""
    directory = tmp_path / "modules"
    directory.mkdir()
    monkeypatch.syspath_prepend(str(directory))

    def write(text: str) -> None:
        (directory / "shelf_tools.py").write_text(text, encoding="utf-8")
        sys.modules.pop("shelf_tools", None)

    yield write
    sys.modules.pop("shelf_tools", None)


def test_a_python_tool_that_is_not_a_strands_tool_stops_the_run_naming_it_and_resumes_once_fixed(
    tmp_path: Path, tool_module
) -> None:
    tool_module(NOT_A_TOOL)
    spec = scripted_spec(tmp_path, '["shelf_tools:lookup"]', "tools:\n  python: [shelf_tools:lookup]\n")
    with pytest.raises(Unsupported) as raised:
        run_script(spec, tmp_path, [call("lookup", item="bolts")])
    message = str(raised.value)
    assert "tool 'shelf_tools:lookup' (agents.worker.tools) is not a Strands tool but a Lookup" in message
    assert "@tool" in message and exit_code_for(raised.value) == 18

    store = LocalStore(tmp_path / "sessions")
    (stopped,) = store.list()
    session_id = stopped.session_id
    assert stopped.status == "failed"

    tool_module(A_TOOL)
    options = RunOptions(out_dir=tmp_path / "out", scripts={"worker": [call("lookup", item="bolts"), "Done."]})
    outcome = resume(session_id, options, store=store)
    assert outcome.status == "completed"
    assert [r["content"][0]["text"] for r in tool_results(store, session_id)] == ["bolts: 40 in stock"]


def test_a_python_api_tool_that_is_a_plain_function_is_refused_by_name(tmp_path: Path) -> None:
    def lookup(item: str) -> str:
        return item

    spec = scripted_spec(tmp_path, "[lookup]")
    refused = r"tool 'lookup' \(agents.worker.tools\) is not a Strands tool but a function"
    with pytest.raises(Unsupported, match=refused):
        run_workflow(
            spec,
            RunOptions(out_dir=tmp_path / "out", scripts={"worker": ["Done."]}, extra_tools={"lookup": lookup}),
        )
