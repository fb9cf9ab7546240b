"""Every context name that runner/patterns/places.py promises at a place exists there when the pattern renders it:
each template of these specs prints every promised name (an undefined one fails the run), for all seven patterns,
HITL prompts, graph conditions and artifacts included (answered on resume, so resumed runs render them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from strands_durable import LocalStore, RunOptions, resume, run_workflow
from strands_durable.errors import HitlPaused
from strands_durable.runner.patterns.places import template_places
from strands_durable.spec import load_spec

HEADER = """\
version: 0
name: ctx-{pattern}
runtime: {{provider: synthetic}}
inputs:
  values: {{topic: tides}}
agents:
  a: {{prompt: "__P0__"}}
  b: {{prompt: "__P1__"}}
outputs:
  artifacts:
    - {{path: "out.md", from: "__P2__"}}
pattern:
  type: {pattern}
  config:
"""
HITL = 'type: hitl, prompt: "__P{n}__", context_display: "__P{m}__"'

CONFIGS = {
    "chain": f"""\
    steps:
      - {{agent: a, input: "__P3__", vars: {{extra: 1}}}}
      - {{{HITL.format(n=4, m=5)}}}
      - {{agent: b, input: "__P6__"}}
""",
    "workflow": f"""\
    tasks:
      - {{id: one, agent: a, input: "__P3__"}}
      - {{id: ask, {HITL.format(n=4, m=5)}, deps: [one]}}
      - {{id: two, agent: b, input: "__P6__", deps: [ask]}}
""",
    "parallel": f"""\
    branches:
      - id: left
        steps:
          - {{agent: a, input: "__P3__"}}
          - {{agent: a, input: "__P4__"}}
      - id: right
        steps:
          - {{agent: b, input: "__P5__"}}
    reduce: {{{HITL.format(n=6, m=7)}}}
""",
    "routing": f"""\
    router:
      agent: a
      input: "__P3__"
      review_router: {{{HITL.format(n=4, m=5)}}}
    routes:
      only:
        then:
          - {{agent: b, input: "__P6__"}}
          - {{agent: b, input: "__P7__"}}
""",
    "evaluator_optimizer": f"""\
    producer: a
    evaluator: {{agent: b, input: "__P3__"}}
    accept: {{min_score: 100, max_iters: 2}}
    revise_prompt: "__P4__"
    review_gate: {{{HITL.format(n=5, m=6)}}}
""",
    "orchestrator_workers": f"""\
    orchestrator: {{agent: a, limits: {{max_workers: 2, max_rounds: 2}}}}
    worker_template: {{agent: b}}
    decomposition_review: {{{HITL.format(n=3, m=4)}}}
    reduce: {{agent: a, input: "__P5__"}}
    reduce_review: {{{HITL.format(n=6, m=7)}}}
    writeup: {{agent: a, input: "__P8__"}}
""",
    "graph": f"""\
    nodes:
      first: {{agent: a, input: "__P3__"}}
      ask: {{{HITL.format(n=4, m=5)}}}
      last: {{agent: b, input: "__P6__"}}
    edges:
      - from: first
        choose:
          - {{when: "__P7__", to: ask}}
          - {{when: else, to: last}}
      - {{from: ask, to: [last]}}
""",
}
PLACEHOLDER = re.compile(r"__P(\d+)__")


def spec_text(pattern: str, tmp_path: Path) -> str:
    """The spec with every template printing every name its places promise (agent prompts: all their places)."""
    draft = HEADER.format(pattern=pattern) + CONFIGS[pattern]
    probe = tmp_path / "probe.yaml"
    probe.write_text(draft, encoding="utf-8")
    promised: dict[str, frozenset[str]] = {}
    conditions: set[str] = set()
    for place in template_places(load_spec(probe)):
        key = PLACEHOLDER.fullmatch(place.template)
        if key is None:  # the artifact's path, a condition's `else`
            assert place.template in ("out.md", "else"), place
            continue
        promised[key[1]] = promised.get(key[1], place.names) & place.names
        if place.condition:
            conditions.add(key[1])
    assert len(promised) == len(set(PLACEHOLDER.findall(draft))), "a template was not listed by template_places"

    def fill(match: re.Match[str]) -> str:
        names = sorted(promised[match[1]] | {"topic"})
        if match[1] in conditions:  # a graph condition: one expression
            return "{{ " + " and ".join(f"({n} | string | length >= 0)" for n in names) + " }}"
        return "".join(f"[{n}={{{{ {n} | string | length }}}}]" for n in names)

    return PLACEHOLDER.sub(fill, draft)


@pytest.mark.parametrize("pattern", sorted(CONFIGS))
def test_every_promised_name_exists_where_the_pattern_renders_it(pattern: str, tmp_path: Path) -> None:
    text = spec_text(pattern, tmp_path)
    assert "{{" in text and "__P" not in text
    spec = tmp_path / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    store = LocalStore(tmp_path / "sessions")
    options = RunOptions(out_dir=tmp_path / "out", hitl_use_defaults=True)
    answers = ["approved", "continue", "ok", "ok", "ok", "ok", "ok", "ok"]
    try:
        outcome = run_workflow(spec, options, store=store)
    except HitlPaused:
        outcome = None
        while outcome is None:
            (session_id,) = store.session_ids()
            try:
                outcome = resume(session_id, RunOptions(hitl_response=answers.pop(0)), store=store)
            except HitlPaused:
                continue
    assert outcome.status == "completed"
    units = store.load(outcome.session_id).units
    later = {"evaluator_optimizer": "iteration[1]:producer", "orchestrator_workers": "round[1]:orchestrator"}
    assert later.get(pattern, next(iter(units))) in units, sorted(units)  # the revise/next-round templates ran
    artifact = (tmp_path / "out" / "out.md").read_text(encoding="utf-8")
    assert "[TRACE=0]" in artifact and "[execution_context=" in artifact and "[topic=5]" in artifact
