"""Every spec of the strands-cli v0 corpus runs to completion offline on the synthetic model, with `--var` values
and HITL answers where it needs them (its MCP servers started with npx: `.ci/run` installs Node where it is missing),
or fails as the table below says, each reason written per spec: the network (exit 18 naming the tool and
`--network`), or a defect in the spec file itself (exit 3 naming it). A spec whose outcome differs fails; so does one
run without its variables that is not refused before a session exists, naming the `--var` to pass."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from strands_durable import LocalStore, RunOptions, resume, run_workflow
from strands_durable.errors import DurableError, HitlPaused, exit_code_for
from tests.corpus import corpus_dir

CORPUS = corpus_dir() / "examples"


@dataclass(frozen=True)
class Expected:
    exit_code: int = 0  # 0: completed
    names: str = ""  # text the error message must contain
    why: str = ""
    variables: dict[str, str] = field(default_factory=dict)
    hitl_answers: tuple[str, ...] = ()  # answers for HITL steps without a default, in order


COMPLETES = Expected()
TABLE: dict[str, Expected] = {
    "atomic-ref-demo-openai.yaml": Expected(variables={"subject": "Refund", "body": "Charged twice."}),
    "chain-calculator-openai.yaml": Expected(variables={"problem": "Solve x^2 + 5x + 6 = 0"}),
    "chain-hitl-business-proposal-openai.yaml": Expected(
        variables={"business_concept": "tool rental", "target_market": "cities", "geographic_scope": "EU"}
    ),
    # its agent prompt names `current_number`, which no input declares: the caller supplies it
    "compaction-auto-reduce-test.yaml": Expected(variables={"starting_number": "1", "current_number": "1"}),
    "compaction-test-openai.yaml": Expected(variables={"iterations": "3"}),
    "customer-support-intake-composite-openai.yaml": Expected(variables={"subject": "Login", "body": "Locked out."}),
    "evaluator-optimizer-hitl-review-openai.yaml": Expected(variables={"topic": "durable workflows"}),
    "evaluator-optimizer-writing-ollama.yaml": Expected(
        3,
        "template syntax error",
        why="validates with a warning, but its revise_prompt has `{{ fix %}` (line 86), a defect in the file; the "
        "first evaluation scores below min_score, so the run renders it and fails there",
    ),
    "github-api-example-openai.yaml": Expected(
        18,
        "HTTP executor tool 'gh'",
        why="its agent calls the GitHub API through an HTTP executor: the network (--network or a real provider)",
        variables={"repo_name": "strands-agents/sdk-python"},
    ),
    "mermaid-diagram-generator.yaml": Expected(variables={"diagram_type": "flowchart", "topic": "login flow"}),
    "multi-step-unsupported.yaml": Expected(variables={"step1": "raw data", "step2": "analysis"}),
    "parallel-hitl-branch-demo.yaml": Expected(variables={"topic": "Python async programming"}),
    "research-workflow-notes-openai.yaml": Expected(18, "http_request", why="its researcher fetches web pages"),
    "routing-hitl-review-openai.yaml": Expected(hitl_answers=("approved",)),
    "single-agent-chain-anthropic.yaml": Expected(variables={"topic": "AI ethics"}),
    "single-agent-chain-gemini.yaml": Expected(variables={"topic": "AI ethics"}),
    "single-agent-chain-openai.yaml": Expected(variables={"topic": "AI ethics"}),
    "spec-generator-agent.yaml": Expected(
        3,
        "agents.spec_architect.prompt",
        why="its agent prompt embeds an example spec whose `{{ steps[0].response }}` is evaluated (needs {% raw %})",
        variables={"topic": "support routing"},
    ),
    "strands-spec-builder-demo.yaml": Expected(variables={"use_case": "triage support email"}),
    "tavily-search-demo.yaml": Expected(
        18,
        "tavily_search",
        why="Tavily is a web search API",
        variables={"topic": "fsync", "max_results": "3", "include_answer": "true"},
    ),
    "workflow-file-operations-openai.yaml": Expected(variables={"source_file": "README.md"}),
}


def corpus_specs() -> list[Path]:
    return sorted(CORPUS.glob("*.yaml"))


def test_the_table_names_only_corpus_specs() -> None:
    names = {path.name for path in corpus_specs()}
    assert len(names) >= 40
    assert set(TABLE) <= names, sorted(set(TABLE) - names)


@pytest.mark.slow
@pytest.mark.parametrize("spec", corpus_specs(), ids=lambda path: path.stem)
def test_corpus_spec_runs_offline_or_fails_as_the_table_says(spec: Path, tmp_path: Path) -> None:
    expected = TABLE.get(spec.name, COMPLETES)
    store = LocalStore(tmp_path / "sessions")
    options = RunOptions(
        provider="synthetic",
        hitl_use_defaults=True,
        out_dir=tmp_path / "out",
        cli_vars=[f"{key}={value}" for key, value in expected.variables.items()],
    )
    try:
        outcome = run_workflow(spec, options, store=store)
        answers = list(expected.hitl_answers)
    except HitlPaused:
        answers = list(expected.hitl_answers)
        outcome = None
        while outcome is None:
            assert answers, f"{spec.name} paused for a human the table gives no answer for"
            (session_id,) = store.session_ids()
            answer = RunOptions(hitl_response=answers.pop(0), hitl_use_defaults=True)
            try:
                outcome = resume(session_id, answer, store=store)
            except HitlPaused:
                continue
    except DurableError as exc:
        assert expected.exit_code == exit_code_for(exc), f"{spec.name}: exit {exit_code_for(exc)}: {exc}"
        assert expected.names in str(exc) and "\n" not in str(exc), str(exc)
        return
    assert expected.exit_code == 0, f"{spec.name} completed but the table expects exit {expected.exit_code}"
    assert not answers, f"{spec.name}: unused HITL answers {answers}"
    assert outcome.status == "completed"
    final = store.load(outcome.session_id)
    assert final.status == "completed" and len(outcome.artifacts) == len(final.artifacts)


@pytest.mark.parametrize(
    "spec", [s for s in corpus_specs() if TABLE.get(s.name, COMPLETES).variables], ids=lambda path: path.stem
)
def test_corpus_spec_without_its_variables_is_refused_before_a_session_naming_the_var(spec: Path, tmp_path: Path):
    store = LocalStore(tmp_path / "sessions")
    options = RunOptions(provider="synthetic", hitl_use_defaults=True, out_dir=tmp_path / "out")
    with pytest.raises(DurableError) as caught:
        run_workflow(spec, options, store=store)
    assert store.session_ids() == []
    if TABLE[spec.name].exit_code == 3 and "syntax" not in TABLE[spec.name].names:
        assert exit_code_for(caught.value) == 3, str(caught.value)  # the file's own defect comes first
        return
    assert exit_code_for(caught.value) == 2 and "--var " in str(caught.value), str(caught.value)
