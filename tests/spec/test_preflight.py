"""Before a session exists, `strands run` refuses what cannot work: an unknown provider (exit 2), a template
name that is neither an input nor a context name at its place (exit 2, naming the --var), `steps[n]` read before
step n ran (exit 3), a tool that cannot run here (exit 18). `strands validate` prints the same as warnings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from strands_durable import LocalStore, RunOptions, run_workflow
from strands_durable.errors import DurableError, exit_code_for
from strands_durable.runner.preflight import findings
from strands_durable.runner.reporter import RecordingReporter
from strands_durable.spec import load_spec
from tests.patterns.test_corpus_offline import COMPLETES, CORPUS, TABLE

CHAIN = """\
version: 0
name: pre
runtime: {{provider: synthetic}}
inputs:
  optional:
    tone: {{type: string, default: calm}}
agents:
  writer:
    prompt: "You write in a {{{{ tone }}}} tone. {prompt_extra}"
    tools: {tools}
pattern:
  type: chain
  config:
    steps:
      - agent: writer
        input: "{first}"
      - agent: writer
        input: "{second}"
"""


def chain(*, first="Start.", second="Go on from {{ steps[0].response }}.", prompt_extra="", tools="[calculator]"):
    return CHAIN.format(first=first, second=second, prompt_extra=prompt_extra, tools=tools)


def run_refused(path: Path, tmp_path: Path, **options) -> DurableError:
    store = LocalStore(tmp_path / "sessions")
    with pytest.raises(DurableError) as caught:
        run_workflow(path, RunOptions(out_dir=tmp_path / "out", **options), store=store)
    assert store.session_ids() == [], "the refusal came after a session was created"
    return caught.value


def test_an_undeclared_template_variable_is_refused_before_a_session_naming_the_var_to_pass(write_spec, tmp_path):
    error = run_refused(write_spec(chain(first="Write about {{ topic }}.")), tmp_path)
    assert exit_code_for(error) == 2
    assert "'topic' at pattern.config.steps[0].input" in str(error) and "--var topic=..." in str(error)
    assert "\n" not in str(error)


def test_a_misspelt_template_name_gets_a_did_you_mean(write_spec, tmp_path):
    error = run_refused(write_spec(chain(first="Write in a {{ toen }} tone, then {{ stpes[0].response }}.")), tmp_path)
    assert exit_code_for(error) == 2
    assert str(error).endswith(
        ": did you mean 'steps' for 'stpes', 'tone' for 'toen'? Otherwise pass --var stpes=... --var toen=..."
    )
    found = findings(load_spec(write_spec(chain(first="{{ toen }}"))), ["tone"])
    assert [f.detail for f in found] == [
        "template variable 'toen' at pattern.config.steps[0].input is neither an input nor a context name "
        "(did you mean 'tone'?)"
    ]
    unlike = run_refused(write_spec(chain(first="Write about {{ topic }}.")), tmp_path)
    assert "did you mean" not in str(unlike) and str(unlike).endswith(": pass --var topic=...")


def test_a_misspelt_provider_gets_a_did_you_mean(write_spec, tmp_path):
    error = run_refused(write_spec(chain()), tmp_path, provider="opnai")
    assert str(error).startswith("unknown provider 'opnai' (--provider) (did you mean 'openai'?); use one of: ")
    error = run_refused(write_spec(chain().replace("provider: synthetic", "provider: antropic")), tmp_path)
    assert str(error).startswith("unknown provider 'antropic' (runtime.provider) (did you mean 'anthropic'?)")


def test_passing_the_variable_runs_and_an_undeclared_var_is_a_warning_naming_it(write_spec, tmp_path):
    reporter = RecordingReporter()
    options = RunOptions(out_dir=tmp_path / "out", cli_vars=["topic=tides"], reporter=reporter)
    outcome = run_workflow(write_spec(chain(first="Write about {{ topic }}.")), options, store=LocalStore(tmp_path))
    assert outcome.status == "completed"
    warnings = [call[1] for call in reporter.calls if call[0] == "warning"]
    assert any("--var topic" in w and "not declared in inputs" in w for w in warnings), warnings


def test_names_the_template_sets_or_loops_over_and_context_names_are_no_finding(write_spec):
    text = chain(
        first="{% set n = 3 %}{{ n }} {{ name }} {{ timestamp }} {{ runtime.provider }} {{ execution_context }}",
        second="{% for s in steps %}{{ loop.index }}: {{ s.response }}{% endfor %} {{ last_response }} "
        "{{ steps[-1].response }} {{ hitl_response }}",
    )
    assert findings(load_spec(write_spec(text)), ["tone"]) == []


def test_a_step_reading_a_later_step_is_a_spec_defect_exit_3(write_spec, tmp_path):
    error = run_refused(write_spec(chain(second="{{ steps[1].response }}")), tmp_path)
    assert exit_code_for(error) == 3
    assert "pattern.config.steps[1].input" in str(error) and "steps[1]" in str(error)


def test_an_agent_prompt_is_checked_in_the_context_of_every_place_its_agent_runs(write_spec, tmp_path):
    error = run_refused(write_spec(chain(prompt_extra="Earlier: {{ steps[0].response }}")), tmp_path)
    assert exit_code_for(error) == 3 and "agents.writer.prompt reads steps[0] before any step ran" in str(error)


def test_an_unknown_provider_is_refused_before_a_session_exit_2(write_spec, tmp_path):
    error = run_refused(write_spec(chain()), tmp_path, provider="synthtic")
    assert exit_code_for(error) == 2 and "unknown provider 'synthtic'" in str(error)
    error = run_refused(write_spec(chain().replace("provider: synthetic", "provider: openia")), tmp_path)
    assert exit_code_for(error) == 2 and "runtime.provider" in str(error)


def test_a_missing_credential_is_refused_before_a_session_exit_10(write_spec, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    error = run_refused(write_spec(chain()), tmp_path, provider="openai")
    assert exit_code_for(error) == 10 and "OPENAI_API_KEY" in str(error) and "--provider synthetic" in str(error)


@pytest.mark.parametrize(("provider", "module"), [("anthropic", "anthropic"), ("ollama", "ollama")])
def test_a_missing_provider_package_is_refused_before_a_session_exit_18(
    write_spec, tmp_path, monkeypatch, provider, module
):
    monkeypatch.setitem(sys.modules, module, None)  # `import <module>` fails, installed or not
    monkeypatch.delitem(sys.modules, f"strands.models.{provider}", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    spec = write_spec(chain().replace("provider: synthetic", f"provider: {provider}"))
    error = run_refused(spec, tmp_path)
    assert exit_code_for(error) == 18 and f"pip install -e '.[{provider}]'" in str(error)


def test_an_agent_of_its_own_provider_is_checked_too(write_spec, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    text = chain().replace("  writer:\n", "  writer:\n    provider: openai\n")
    error = run_refused(write_spec(text), tmp_path)
    assert exit_code_for(error) == 10 and "OPENAI_API_KEY" in str(error)


@pytest.mark.parametrize(
    ("tools", "names"),
    [
        ("[tools_module_nowhere:func]", "'tools_module_nowhere:func' (agents.writer.tools) cannot be imported"),
        ("[http_request]", "'http_request' (agents.writer.tools) needs the network"),
        ("[nowhere_module.func]", "'nowhere_module.func'"),
    ],
)
def test_a_tool_that_cannot_run_here_is_refused_before_a_session_exit_18(write_spec, tmp_path, tools, names):
    error = run_refused(write_spec(chain(tools=tools)), tmp_path)
    assert exit_code_for(error) == 18 and names in str(error), str(error)


@pytest.mark.parametrize("spec", sorted(CORPUS.glob("*.yaml")), ids=lambda path: path.stem)
def test_no_false_alarm_on_any_corpus_spec(spec: Path):
    """With the variables the corpus table passes, only the findings the table explains remain."""
    loaded = load_spec(spec)
    expected = TABLE.get(spec.name, COMPLETES)
    inputs = [*loaded.inputs.declared(), *loaded.inputs.values, *expected.variables]
    found = findings(loaded, inputs, provider="synthetic")
    if expected.exit_code == 0 or "syntax" in expected.names:  # a syntax error shows only when rendered
        assert found == [], [f.detail for f in found]
    else:  # the reason the table gives is found before the session exists
        assert any(int(f.exit_code) == expected.exit_code and expected.names in f.detail for f in found), found


def test_a_tool_name_nothing_defines_is_no_finding_and_the_run_warns_once_and_runs_without_it(write_spec, tmp_path):
    path = write_spec(chain(tools="[no_such_tool, calculator]", first="Go."))
    assert findings(load_spec(path), ["tone"]) == []
    reporter = RecordingReporter()
    options = RunOptions(out_dir=tmp_path / "out", reporter=reporter)
    outcome = run_workflow(path, options, store=LocalStore(tmp_path / "sessions"))
    assert outcome.status == "completed"
    warnings = [call[1] for call in reporter.calls if call[0] == "warning"]
    assert [w for w in warnings if "no_such_tool" in w] == [
        "Warning: tool 'no_such_tool' (agents.writer.tools) is defined nowhere (not a native tool, a tools.python "
        "entry, an HTTP executor or an MCP server): the agent runs without it, as in strands-cli"
    ]


@pytest.mark.slow
def test_validate_prints_findings_as_warnings_and_exits_0(write_spec):
    path = write_spec(chain(first="Write about {{ topic }}.", tools="[no_such_tool]"))
    result = subprocess.run(
        [sys.executable, "-m", "strands_durable", "validate", str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "Warning: template variable 'topic' at pattern.config.steps[0].input" in result.stderr
    assert "Warning: tool 'no_such_tool' (agents.writer.tools) is defined nowhere" in result.stderr
