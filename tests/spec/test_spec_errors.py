"""Each class of spec error is a SpecError (exit 3) naming the file, the key path and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable.errors import ExitCode, SpecError
from strands_durable.spec import load_spec

BASE = """\
version: 0
name: demo
runtime:
  provider: synthetic
agents:
  writer:
    prompt: "Write about {{ topic }}"
  reviewer:
    prompt: Review it.
pattern:
  type: chain
  config:
    steps:
      - agent: writer
        input: "go"
"""


def spec_error(path: Path) -> SpecError:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert info.value.exit_code == ExitCode.SPEC_INVALID
    assert str(info.value).startswith(str(path))
    return info.value


def with_pattern(pattern: str) -> str:
    return BASE[: BASE.index("pattern:")] + pattern


def test_bad_yaml_names_the_line(write_spec):
    error = spec_error(write_spec(BASE.replace("provider: synthetic", "provider: [synthetic")))
    assert error.line == 5
    assert error.detail == ("invalid YAML: expected ',' or ']', but got ':' (while parsing a flow sequence on line 4)")


def test_unknown_key_names_key_path_and_line(write_spec):
    error = spec_error(write_spec(BASE.replace('        input: "go"', '        inptu: "go"')))
    assert (error.key_path, error.line) == ("pattern.config.steps[0].inptu", 15)
    assert error.detail == "unknown key 'inptu' (did you mean 'input'?)"
    assert str(error) == f"{error.file}:15: pattern.config.steps[0].inptu: unknown key 'inptu' (did you mean 'input'?)"


def test_unknown_top_level_key(write_spec):
    error = spec_error(write_spec(BASE + "extras: 1\n"))
    assert (error.key_path, error.line) == ("extras", 16)


def test_missing_required_key_names_the_parent_line(write_spec):
    error = spec_error(write_spec(BASE.replace("  provider: synthetic\n", "  model_id: x\n")))
    assert (error.key_path, error.line, error.detail) == (
        "runtime.provider",
        3,
        "missing required key 'provider'",
    )


def test_wrong_type_is_not_coerced(write_spec):
    error = spec_error(write_spec(BASE.replace("runtime:\n", "runtime:\n  max_parallel: '5'\n")))
    assert error.key_path == "runtime.max_parallel" and "integer" in error.detail


def test_unknown_pattern_type(write_spec):
    error = spec_error(write_spec(BASE.replace("type: chain", "type: chian")))
    assert error.key_path == "pattern" and "chain, workflow" in error.detail


@pytest.mark.parametrize(
    ("written", "ending"),
    [
        ("chian", ", got 'chian' (did you mean 'chain'?)"),
        ("evaluator-optimizer", ", got 'evaluator-optimizer' (did you mean 'evaluator_optimizer'?)"),
        ("orchestrator", ", got 'orchestrator' (did you mean 'orchestrator_workers'?)"),
        ("dag", ", got 'dag'"),
    ],
)
def test_a_misspelt_pattern_type_says_what_was_written_and_the_near_miss(write_spec, written, ending):
    error = spec_error(write_spec(BASE.replace("type: chain", f"type: {written}")))
    assert error.detail.startswith("`type` must be one of: chain, workflow, parallel, routing")
    assert error.detail.endswith(ending), error.detail


def test_dangling_agent_reference(write_spec):
    error = spec_error(write_spec(BASE.replace("- agent: writer", "- agent: ghost")))
    assert (error.key_path, error.line) == ("pattern.config.steps[0].agent", 14)
    assert error.detail == "unknown agent 'ghost' (agents: reviewer, writer)"


@pytest.mark.parametrize(
    ("pattern", "key_path"),
    [
        (
            "pattern:\n  type: evaluator_optimizer\n  config:\n    producer: writer\n"
            "    evaluator: {agent: nobody}\n    accept: {min_score: 80}\n",
            "pattern.config.evaluator.agent",
        ),
        (
            "pattern:\n  type: orchestrator_workers\n  config:\n    orchestrator: {agent: writer}\n"
            "    worker_template: {agent: nobody}\n",
            "pattern.config.worker_template.agent",
        ),
        (
            "pattern:\n  type: routing\n  config:\n    router: {agent: writer}\n"
            "    routes:\n      a: {then: [{agent: nobody}]}\n",
            "pattern.config.routes.a.then[0].agent",
        ),
        (
            "pattern:\n  type: parallel\n  config:\n    branches:\n"
            "      - {id: a, steps: [{agent: writer}]}\n"
            "      - {id: b, steps: [{agent: writer}]}\n    reduce: {agent: nobody}\n",
            "pattern.config.reduce.agent",
        ),
    ],
)
def test_dangling_agent_reference_in_every_pattern(write_spec, pattern, key_path):
    error = spec_error(write_spec(with_pattern(pattern)))
    assert error.key_path == key_path and "unknown agent 'nobody'" in error.detail


WORKFLOW = """\
pattern:
  type: workflow
  config:
    tasks:
      - {id: a, agent: writer, deps: [c]}
      - {id: b, agent: writer, deps: [a]}
      - {id: c, agent: writer, deps: [b]}
"""


def test_dependency_cycle_is_named(write_spec):
    error = spec_error(write_spec(with_pattern(WORKFLOW)))
    assert error.detail == "dependency cycle: a -> c -> b -> a"
    assert error.key_path == "pattern.config.tasks[0].deps"


def test_unknown_and_self_dependencies(write_spec):
    error = spec_error(write_spec(with_pattern(WORKFLOW.replace("deps: [c]", "deps: [zz]"))))
    assert error.detail.startswith("task 'a' depends on unknown task 'zz'")
    assert error.key_path == "pattern.config.tasks[0].deps[0]"
    error = spec_error(write_spec(with_pattern(WORKFLOW.replace("deps: [c]", "deps: [a]"))))
    assert error.detail.startswith("task 'a' depends on itself")


def test_duplicate_task_id(write_spec):
    error = spec_error(write_spec(with_pattern(WORKFLOW.replace("id: b", "id: a"))))
    assert error.detail.startswith("duplicate task id 'a'")


GRAPH = """\
pattern:
  type: graph
  config:
    nodes:
      draft: {agent: writer}
      review: {agent: reviewer}
    edges:
      - from: draft
        to: [review]
      - from: review
        choose:
          - when: "{{ 'approve' in nodes.review.response.lower() }}"
            to: draft
          - when: else
            to: review
"""


def test_graph_spec_is_valid(write_spec):
    assert load_spec(write_spec(with_pattern(GRAPH))).pattern.type == "graph"


def test_unknown_graph_node_in_an_edge(write_spec):
    error = spec_error(write_spec(with_pattern(GRAPH.replace("to: [review]", "to: [reveiw]"))))
    assert error.key_path == "pattern.config.edges[0].to[0]"
    assert error.detail == "edge to unknown node 'reveiw' (nodes: draft, review)"
    error = spec_error(write_spec(with_pattern(GRAPH.replace("from: review", "from: nowhere"))))
    assert error.key_path == "pattern.config.edges[1].from"
    error = spec_error(write_spec(with_pattern(GRAPH.replace("            to: draft", "            to: x"))))
    assert error.key_path == "pattern.config.edges[1].choose[0].to"


def test_graph_edge_needs_to_or_choose_and_else_last(write_spec):
    error = spec_error(write_spec(with_pattern(GRAPH.replace("        to: [review]\n", ""))))
    assert error.key_path == "pattern.config.edges[0]" and "exactly one of" in error.detail
    swapped = GRAPH.replace("when: else", "when: PLACEHOLDER").replace(
        "when: \"{{ 'approve' in nodes.review.response.lower() }}\"", "when: else"
    )
    swapped = swapped.replace("when: PLACEHOLDER", "when: \"{{ 'approve' in nodes.review.response }}\"")
    error = spec_error(write_spec(with_pattern(swapped)))
    assert error.detail == "`when: else` must be the last choice"


def test_graph_condition_syntax_error(write_spec):
    error = spec_error(write_spec(with_pattern(GRAPH.replace(".lower() }}", ".lower( }}"))))
    assert error.key_path == "pattern.config.edges[1].choose[0].when" and "syntax" in error.detail


ROUTING = """\
pattern:
  type: routing
  config:
    router:
      agent: writer
      review_router:
        type: hitl
        prompt: Approve?
        default: "route:billing"
    routes:
      billing:
        then: [{agent: reviewer}]
"""


def test_unknown_route(write_spec):
    assert load_spec(write_spec(with_pattern(ROUTING))).pattern.type == "routing"
    error = spec_error(write_spec(with_pattern(ROUTING.replace("route:billing", "route:biling"))))
    assert error.key_path == "pattern.config.router.review_router.default"
    assert error.detail == "unknown route 'biling' (routes: billing)"


def test_template_syntax_error_names_the_exact_line(write_spec):
    text = BASE.replace('        input: "go"', "        input: |\n          fine line\n          {{ broken %}\n")
    error = spec_error(write_spec(text))
    assert (error.key_path, error.line) == ("pattern.config.steps[0].input", 17)
    assert error.detail.startswith("template syntax error")


@pytest.mark.parametrize(
    ("old", "new", "key_path"),
    [
        ("  writer:\n", "  '..':\n", "agents['..']"),
        ("  writer:\n", "  'a/b':\n", "agents['a/b']"),
        ("  writer:\n", "  '.':\n", "agents['.']"),
    ],
)
def test_unsafe_agent_id(write_spec, old, new, key_path):
    error = spec_error(write_spec(BASE.replace(old, new).replace("- agent: writer", "- agent: reviewer")))
    assert error.key_path == key_path and "not a valid id" in error.detail
    assert error.line == 6


@pytest.mark.parametrize("bad_id", ["..", "a/b", "a b", "x\\\\y"])
def test_unsafe_task_branch_node_and_route_ids(write_spec, bad_id):
    quoted = f'"{bad_id}"'
    cases = [
        (WORKFLOW.replace("id: a,", f"id: {quoted},"), "pattern.config.tasks[0].id"),
        (GRAPH.replace("      draft: {agent", f"      {quoted}: {{agent"), "pattern.config.nodes"),
        (ROUTING.replace("      billing:\n", f"      {quoted}:\n"), "pattern.config.routes"),
    ]
    for pattern, prefix in cases:
        error = spec_error(write_spec(with_pattern(pattern)))
        assert error.key_path.startswith(prefix) and "not a valid id" in error.detail


def test_artifact_path_may_not_escape_the_output_directory(write_spec):
    for path in ("/etc/passwd", "../out.md", "a/../../b.md", "{{ name }}/../../x"):
        error = spec_error(write_spec(BASE + f"outputs:\n  artifacts:\n    - path: '{path}'\n      from: x\n"))
        assert error.key_path == "outputs.artifacts[0].path"


def test_input_default_must_fit_its_declaration(write_spec):
    text = BASE + "inputs:\n  optional:\n    n: {type: integer, default: many}\n"
    error = spec_error(write_spec(text))
    assert error.key_path == "inputs.optional.n.default" and "integer" in error.detail
    text = BASE + "inputs:\n  optional:\n    tone: {type: string, enum: [calm, loud]}\n  values:\n    tone: wild\n"
    error = spec_error(write_spec(text))
    assert error.key_path == "inputs.values.tone"


def test_non_mapping_document(write_spec):
    assert "mapping" in spec_error(write_spec("- just\n- a list\n")).detail
    assert "empty" in spec_error(write_spec("")).detail


def test_missing_file_and_directory(tmp_path):
    assert spec_error(tmp_path / "nope.yaml").detail == "no such file"
    assert spec_error(tmp_path).detail == "not a regular file"


def test_python_tool_extension_key_and_unknown_tool_keys(write_spec):
    tools = "tools:\n  python:\n    - calculator\n    - {callable: 'mail.send:send_email', x-idempotent: false}\n"
    text = BASE + tools
    spec = load_spec(write_spec(text))
    entries = spec.tools.python_entries()
    assert [(entry.name, entry.idempotent) for entry in entries] == [
        ("calculator", True),
        ("mail.send:send_email", False),
    ]
    error = spec_error(write_spec(text.replace("x-idempotent", "x-idempotnet")))
    assert (error.key_path, error.detail) == (
        "tools.python[1].x-idempotnet",
        "unknown key 'x-idempotnet' (did you mean 'x-idempotent'?)",
    )
    error = spec_error(write_spec(text.replace("x-idempotent: false", "x-idempotent: 'no'")))
    assert error.key_path == "tools.python[1].x-idempotent"
    error = spec_error(write_spec(BASE + "tools:\n  python:\n    - 'not a name'\n"))
    assert error.key_path == "tools.python[0]" and "not a tool name" in error.detail


def test_json_spec_loads_and_reports_errors(write_spec):
    import json

    import yaml

    data = yaml.safe_load(BASE)
    assert load_spec(write_spec(json.dumps(data, indent=2), "spec.json")).name == "demo"
    data["runtime"]["bogus"] = 1
    error = spec_error(write_spec(json.dumps(data, indent=2), "bad.json"))
    assert error.key_path == "runtime.bogus" and error.line is not None
    error = spec_error(write_spec('{"version": 0,', "broken.json"))
    assert "invalid JSON" in error.detail and error.line == 1
