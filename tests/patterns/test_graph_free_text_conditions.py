"""The synthetic model satisfies free-text graph conditions: the literals a `when` compares a node's answer with
(`'approve' in ...lower()`, `... == 'done'`) appear in that node's answers, varied by seed, so loops exit and
every edge is taken by some seed; the edges a run never took are named."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable import LocalStore, RunOptions, run_workflow
from strands_durable.runner.patterns.graph import untaken_edges
from strands_durable.spec import load_spec
from strands_durable.spec.templates import compared_literals

SEEDS = range(6)

REVIEW_LOOP = """
version: 0
name: free-text-review
runtime:
  provider: synthetic
  model_id: synthetic-1
agents:
  writer:
    prompt: You write short announcements.
  critic:
    prompt: You judge announcements.
pattern:
  type: graph
  config:
    max_iterations: 6
    nodes:
      draft:
        agent: writer
        input: "Draft an announcement.{% if nodes.review %} Feedback: {{ nodes.review.response }}{% endif %}"
      review:
        agent: critic
        input: "Judge this draft and say whether you approve it: {{ nodes.draft.response }}"
      publish:
        agent: writer
        input: "Publish: {{ nodes.draft.response }}"
    edges:
      - from: draft
        to: [review]
      - from: review
        choose:
          - when: "{{ 'approved' in nodes.review.response.lower() }}"
            to: publish
          - when: else
            to: draft
"""

EXACT_CHECK = REVIEW_LOOP.replace(
    "\"{{ 'approved' in nodes.review.response.lower() }}\"", "\"nodes.review.response.strip() == 'SHIP IT'\""
)


def _runs(tmp_path: Path, text: str) -> tuple[object, list[object]]:
    spec_path = tmp_path / "graph.strands.yaml"
    spec_path.write_text(text)
    store = LocalStore(tmp_path / "sessions")
    states = []
    for seed in SEEDS:
        options = RunOptions(provider="synthetic", seed=seed, out_dir=tmp_path / f"out-{seed}")
        outcome = run_workflow(spec_path, options, store=store)
        assert outcome.status == "completed", seed
        states.append(store.load(outcome.session_id))
    return load_spec(spec_path), states


@pytest.mark.parametrize("text", [REVIEW_LOOP, EXACT_CHECK], ids=["in", "equals"])
def test_free_text_conditions_exit_the_loop_and_take_every_edge(tmp_path: Path, text: str) -> None:
    spec, states = _runs(tmp_path, text)
    config = spec.pattern.config
    records = [record for state in states for record in state.units.values()]
    assert untaken_edges(config, records) == []  # across the seeds, both branches of the review are taken
    assert max(state.pattern_state["iteration_counts"]["draft"] for state in states) >= 2  # the loop ran
    assert all(state.pattern_state["path"][-1] == "publish" for state in states)  # and always exited


def test_one_seed_names_the_edges_it_never_took(tmp_path: Path) -> None:
    spec, states = _runs(tmp_path, REVIEW_LOOP)
    looped = [state for state in states if state.pattern_state["iteration_counts"]["draft"] == 1]
    assert looped, "some seed approves the first draft"
    assert untaken_edges(spec.pattern.config, list(looped[0].units.values())) == ["review -> draft"]


def test_the_literals_are_read_from_the_condition_syntax_tree() -> None:
    assert compared_literals("{{ 'verdict: approve' in nodes.review.response.lower() }}") == [
        ("in", "verdict: approve")
    ]
    assert compared_literals("nodes.a.response.strip() == 'done' or 'LGTM' not in last_response") == [
        ("==", "done"),
        ("in", "LGTM"),
    ]
    assert compared_literals("else") == [] and compared_literals("{{ total_steps > 3 }}") == []
