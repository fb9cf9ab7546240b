"""strands-cli's remaining native tools, run by a real Agent through the durable tool path: `python_exec` (only
with --allow-python-exec, restricted, with a real timeout), `search` (local), the `Skill` tool of the spec's
`skills`, and the network tools refused offline before a session exists unless `--network` is given."""

from __future__ import annotations

import pytest

from strands_durable.errors import DurableError, exit_code_for
from strands_durable.runner.native_tools import NATIVE_TOOL_NAMES, native_tools
from strands_durable.runner.skills import skills_prompt
from strands_durable.spec import load_spec
from tests.conftest import REPO
from tests.tools.support import call, result_text, run_script, scripted_spec, tool_results


def test_the_names_known_before_a_run_are_the_tools_built() -> None:
    assert set(native_tools()) == NATIVE_TOOL_NAMES


def test_python_exec_is_refused_before_a_session_without_the_flag(tmp_path):
    spec = scripted_spec(tmp_path, "[python_exec]")
    with pytest.raises(DurableError) as caught:
        run_script(spec, tmp_path, [call("python_exec", code="print(1)")])
    assert exit_code_for(caught.value) == 18 and "--allow-python-exec" in str(caught.value)
    assert not (tmp_path / "sessions").exists() or not list((tmp_path / "sessions").iterdir())


def test_python_exec_is_refused_without_the_flag_only_when_an_agent_gets_it_as_the_readme_says(tmp_path):
    listed = "tools:\n  python: [python_exec, calculator]\n"
    given_to_none, _ = run_script(scripted_spec(tmp_path, "[calculator]", listed), tmp_path, [])
    assert given_to_none.status == "completed"
    with pytest.raises(DurableError) as caught:  # an agent without `tools:` gets every tool of the spec
        run_script(scripted_spec(tmp_path, None, listed, name="every.yaml"), tmp_path, [])
    assert exit_code_for(caught.value) == 18 and "agents.worker.tools" in str(caught.value)
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    row = readme.split("| `--allow-python-exec` |")[1].split("|")[0]
    assert "without the flag a run in which an agent gets it" in row and "given to no agent it never runs" in row


def test_python_exec_runs_restricted_code_with_a_real_timeout_and_its_results_are_committed(tmp_path):
    spec = scripted_spec(tmp_path, "[python_exec]")
    turns = [
        call("python_exec", code="print(sum(range(7)) * 2)"),
        call("python_exec", code="import os\nprint(os.getcwd())"),
        call("python_exec", code="while True:\n    pass", timeout=1),
    ]
    outcome, store = run_script(spec, tmp_path, turns, allow_python_exec=True)
    assert outcome.status == "completed"
    printed, imported, looping = tool_results(store, outcome.session_id)
    assert printed["status"] == "success" and result_text(printed).strip() == "42"
    assert imported["status"] == "error" and "ImportError" in result_text(imported)
    assert looping["status"] == "error" and "timed out after 1 s" in result_text(looping)
    assert store.load(outcome.session_id).meta["runtime"]["allow_python_exec"] is True  # a resume repeats it


def test_search_finds_lines_in_a_local_file_as_strands_cli_shows_them(tmp_path):
    spec = scripted_spec(tmp_path, "[file_write, search]")
    turns = [
        call("file_write", path="notes.txt", content="alpha\nBeta gamma\nbeta\n"),
        call("search", query="beta", path="notes.txt"),
        call("search", query="^b", path="notes.txt", is_regex=True, ignore_case=False),
    ]
    outcome, store = run_script(spec, tmp_path, turns)
    _, plain, regex = tool_results(store, outcome.session_id)
    assert (
        result_text(plain) == "Found 2 match(es) for 'beta' in notes.txt:\n\n   2 | >>>Beta<<< gamma\n   3 | >>>beta<<<"
    )
    assert result_text(regex) == "Found 1 match(es) for '^b' in notes.txt:\n\n   3 | >>>b<<<eta"


def test_the_skill_tool_reads_a_skill_and_its_modules_and_agents_are_told_about_skills(tmp_path):
    skill = tmp_path / "skills" / "style"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("Write short sentences.", encoding="utf-8")
    (skill / "tables.md").write_text("Use pipes.", encoding="utf-8")
    extra = "skills:\n  - {id: style, path: skills/style, description: House style}\n"
    spec = scripted_spec(tmp_path, "[]", extra)
    turns = [call("Skill", skill_id="style"), call("Skill", skill_id="style/tables"), call("Skill", skill_id="nope")]
    outcome, store = run_script(spec, tmp_path, turns)
    whole, module, missing = tool_results(store, outcome.session_id)
    assert "Write short sentences." in result_text(whole) and "Use pipes." in result_text(module)
    assert missing["status"] == "error" and "Available skills: style" in result_text(missing)
    prompt = skills_prompt(load_spec(spec))
    assert "# Available Skills" in prompt and "- **style** (path: `skills/style`): House style" in prompt


@pytest.mark.parametrize("tool", ["web_fetch", "duckduckgo_search", "http_request", "tavily_search"])
def test_network_tools_are_refused_offline_before_a_session_naming_the_flag(tmp_path, tool):
    spec = scripted_spec(tmp_path, f"[{tool}]")
    with pytest.raises(DurableError) as caught:
        run_script(spec, tmp_path, [])
    assert exit_code_for(caught.value) == 18
    assert f"'{tool}'" in str(caught.value) and "--network" in str(caught.value)


def test_an_agent_gets_the_tools_strands_cli_gives_it(tmp_path):
    """Its `tools:` plus the jit_tools; without `tools:` every Python tool and HTTP executor; always every MCP
    server and, with skills, the Skill tool."""
    from strands_durable.runner.tools import ToolResolver

    extra = """\
    context_policy: {retrieval: {jit_tools: [grep, head]}}
    skills: [{id: style, path: skills/style}]
    tools:
      python: [strands_tools.calculator]
      http_executors: [{id: api, base_url: "http://127.0.0.1:9"}]
      mcp: [{id: fs, command: npx}]
    """
    spec = load_spec(scripted_spec(tmp_path, "[head, file_read, notes_manager]", extra))
    resolver = ToolResolver(spec, provider="synthetic", native={})
    assert resolver.names_for("worker") == ["head", "file_read", "grep", "fs", "Skill"]
    assert resolver.names_for("worker", []) == ["grep", "head", "fs", "Skill"]
    no_jit = load_spec(scripted_spec(tmp_path, "null", extra.replace("jit_tools: [grep, head]", "jit_tools: []")))
    assert ToolResolver(no_jit, provider="synthetic", native={}).names_for("worker") == [
        "strands_tools.calculator",
        "api",
        "fs",
        "Skill",
    ]


def test_the_computing_tools_run_on_the_invocations_loop_with_their_results_and_errors(tmp_path, monkeypatch):
    """calculator and current_time are coroutines (no hand-over to the tool pool's thread and back); what they
    return, and the error a bad expression gives, are committed as before."""
    from strands_durable.agent import loop

    handed_over: list[object] = []
    real_submit = loop._ToProcessPool.submit

    def counting_submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        handed_over.append(fn)
        return real_submit(self, fn, *args, **kwargs)

    monkeypatch.setattr(loop._ToProcessPool, "submit", counting_submit)
    spec = scripted_spec(tmp_path, "[calculator, current_time]")
    turns = [call("calculator", expression="(2 + 3) * 4"), call("calculator", expression="1 / 0"), call("current_time")]
    outcome, store = run_script(spec, tmp_path, turns)
    assert outcome.status == "completed"
    product, division, now = tool_results(store, outcome.session_id)
    assert product["status"] == "success" and result_text(product) == "20"
    assert division["status"] == "error" and "cannot evaluate '1 / 0'" in result_text(division)
    assert now["status"] == "success" and result_text(now).startswith("20")
    assert handed_over == []
