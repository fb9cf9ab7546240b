"""The pattern contracts: instructions are detected, answers parse tolerantly, and the synthetic model answers
every contract with varied, valid choices."""

from __future__ import annotations

import subprocess
import sys

import pytest

from strands_durable.models.contracts import (
    Contract,
    ContractError,
    Evaluation,
    detect_contract,
    evaluation_instruction,
    instruction_for,
    parse_evaluation,
    parse_route,
    parse_task_list,
    route_instruction,
    strip_instructions,
    task_list_instruction,
)
from strands_durable.models.request import ModelRequest
from strands_durable.models.synthetic_policy import SyntheticPolicy


def test_importing_contracts_and_the_models_package_does_not_import_strands():
    code = (
        "import sys, strands_durable.models, strands_durable.models.contracts;"
        "strands_durable.models.parse_route;"
        "sys.exit(1 if any(m == 'strands' or m.startswith('strands.') for m in sys.modules) else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


@pytest.mark.parametrize(
    "contract",
    [
        Contract("route", route_names=("coding", "research", "v1.2:beta")),
        Contract("evaluation"),
        Contract("task_list", max_workers=4),
        Contract("task_list", max_workers=None),
    ],
)
def test_every_instruction_is_detected_with_its_parameters(contract):
    prompt = "Classify this request: fix the login page." + instruction_for(contract)
    assert detect_contract(prompt) == contract
    assert strip_instructions(prompt) == "Classify this request: fix the login page."


def test_a_prompt_without_instruction_asks_for_no_contract_and_the_last_instruction_wins():
    assert detect_contract('Return {"route": "a"} please') is None
    both = "x" + evaluation_instruction() + "\nthen" + route_instruction(["a", "b"])
    assert detect_contract(both) == Contract("route", route_names=("a", "b"))


def test_instruction_builders_reject_impossible_parameters():
    with pytest.raises(ValueError):
        route_instruction([])
    with pytest.raises(ValueError):
        task_list_instruction(0)


@pytest.mark.parametrize(
    "text",
    [
        '{"route": "research"}',
        'I think this is research.\n```json\n{"route": "research"}\n```',
        'Answer: {"route": "Research", "why": "needs sources"}',
        "research",
        '"research".',
    ],
)
def test_parse_route_accepts_json_in_prose_fences_and_bare_names(text):
    assert parse_route(text, ["coding", "research"]) == "research"


@pytest.mark.parametrize("text", ['{"route": "cooking"}', "no idea", "", '{"path": "research"}'])
def test_parse_route_rejects_an_answer_without_a_valid_route(text):
    with pytest.raises(ContractError) as caught:
        parse_route(text, ["coding", "research"])
    assert isinstance(caught.value, ValueError)
    assert "coding" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"score": 85, "issues": ["a"], "fixes": ["b"]}', Evaluation(85, ["a"], ["b"])),
        (
            'Here:\n```json\n{"score": "72/100", "issues": "too short"}\n```',
            Evaluation(72, ["too short"], []),
        ),
        ('{"score": 90.4}', Evaluation(90, [], [])),
    ],
)
def test_parse_evaluation_is_tolerant(text, expected):
    assert parse_evaluation(text) == expected


@pytest.mark.parametrize("text", ['{"score": 140}', '{"score": "high"}', '{"score": true}', "looks good"])
def test_parse_evaluation_rejects_a_missing_or_out_of_range_score(text):
    with pytest.raises(ContractError):
        parse_evaluation(text)


@pytest.mark.parametrize(
    "text",
    [
        '[{"task": "one"}, {"task": "two"}]',
        'Plan:\n```json\n["one", "two"]\n```',
        'The plan [draft] is {"tasks": [{"description": "one"}, "two"]}',
    ],
)
def test_parse_task_list_accepts_the_common_shapes(text):
    assert parse_task_list(text) == ["one", "two"]


def test_parse_task_list_cuts_to_max_workers_and_rejects_prose():
    assert parse_task_list('[{"task": "a"}, {"task": "b"}, {"task": "c"}]', max_workers=2) == ["a", "b"]
    with pytest.raises(ContractError):
        parse_task_list("first do a, then b")


def _answer(seed: int, prompts: list[str]) -> str:
    """The synthetic answer to the last of `prompts`, each earlier one answered as the model did."""
    policy = SyntheticPolicy(seed=seed)
    messages: list[dict] = []
    answer = None
    for prompt in prompts:
        messages.append({"role": "user", "content": [{"text": prompt}]})
        answer = policy.answer(ModelRequest.build(messages)).text
        messages.append({"role": "assistant", "content": [{"text": answer}]})
    assert answer is not None
    return answer


def test_synthetic_router_takes_every_route_across_seeds():
    routes = ["coding", "research", "writing", "billing"]
    prompt = "Route this task: summarise a paper." + route_instruction(routes)
    chosen = {parse_route(_answer(seed, [prompt]), routes) for seed in range(40)}
    assert chosen == set(routes)


def test_synthetic_evaluator_scores_first_drafts_both_below_and_above_80_and_later_ones_higher():
    prompt = "Evaluate this draft: the sky is blue because of scattering." + evaluation_instruction()
    first = [parse_evaluation(_answer(seed, [prompt])).score for seed in range(40)]
    assert min(first) < 80 <= max(first)
    assert sum(score < 80 for score in first) > len(first) / 2  # evaluator loops usually run twice
    third = [parse_evaluation(_answer(seed, [prompt, prompt, prompt])).score for seed in range(20)]
    assert min(third) >= 85


def test_synthetic_evaluation_lists_issues_and_fixes_when_the_score_is_low():
    prompt = "Evaluate this draft about tides and moons." + evaluation_instruction()
    for seed in range(20):
        verdict = parse_evaluation(_answer(seed, [prompt]))
        assert 0 <= verdict.score <= 100
        assert len(verdict.issues) == len(verdict.fixes)
        if verdict.score < 90:
            assert verdict.issues


def test_synthetic_orchestrator_plans_a_varying_number_of_tasks_within_max_workers():
    prompt = "Plan the research on solar panels, batteries and grids." + task_list_instruction(4)
    counts = set()
    for seed in range(30):
        tasks = parse_task_list(_answer(seed, [prompt]))
        assert 1 <= len(tasks) <= 4
        assert len(set(tasks)) == len(tasks)
        counts.add(len(tasks))
    assert counts == {1, 2, 3, 4}
