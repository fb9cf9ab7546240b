"""`context_policy.compaction` with effect, durably: a real agent's conversation is summarized once its latest
model turn passes `when_tokens_over`, the model then sees the summary and the recent part (a valid history), the
compaction is committed the moment it is made (a resume restores it exactly and never asks for that summary
again), and a crash at every point of the run resumes to the uninterrupted run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from strands_durable import CrashPoints, InjectedCrash, LocalStore, RunOptions, resume, run_workflow
from strands_durable.agent.compaction import SUMMARIZER_PROMPT
from strands_durable.errors import DurableError, exit_code_for
from strands_durable.faults.classes.explore import explore_point
from strands_durable.faults.kit.oracle import comparable, first_difference
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.history import validate
from strands_durable.models.providers import build_model
from strands_durable.models.wrapping import WrappedModel
from tests.core.support import crash_and_resume, crash_at, golden_run

SPEC = Path(__file__).parent / "specs" / "chain-compaction.strands.yaml"
SUMMARY_REQUEST = "Please summarize this conversation."


class _Requests(WrappedModel):
    """Records every request: (model id, system prompt, messages)."""

    def __init__(self, inner: Any, model_id: str, log: list[tuple[str, str, list[Any]]]) -> None:
        super().__init__(inner)
        self.model_id = model_id
        self.log = log

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kw: Any
    ) -> AsyncIterator[Any]:
        self.log.append((self.model_id, system_prompt or "", [dict(m) for m in messages]))
        async for event in self.inner.stream(messages, tool_specs, system_prompt, **kw):
            yield event


def _options(root: Path, log: list[Any], points: CrashPoints | None = None) -> RunOptions:
    def factory(*, agent_id: str, provider: str, model_id: Any, runtime: Any) -> Any:
        model = build_model(provider, model_id=model_id, runtime=runtime, seed=0, agent_id=agent_id)
        return _Requests(model, str(model_id), log)

    return RunOptions(out_dir=root / "out", model_factory=factory, crash_points=points or CrashPoints())


def _summaries(log: list[tuple[str, str, list[Any]]]) -> list[tuple[str, str, list[Any]]]:
    return [entry for entry in log if entry[2] and entry[2][-1]["content"] == [{"text": SUMMARY_REQUEST}]]


def test_the_conversation_is_summarized_past_the_threshold_and_the_model_sees_a_valid_compacted_history(tmp_path):
    log: list[Any] = []
    store = LocalStore(tmp_path / "sessions")
    outcome = run_workflow(SPEC, _options(tmp_path, log), store=store)
    assert outcome.status == "completed"
    conv = store.load(outcome.session_id).conversations["clerk"]
    assert len(_summaries(log)) == 2  # before step[3] and before step[4]: each time the last turn passed 1000
    state = conv.cm_state
    summary = state["summary_message"]
    assert summary["role"] == "user" and "tracking_id" not in summary
    removed = state["removed_message_count"]
    assert 0 < removed < len(conv.messages) and state["compacted_at"] == conv.units.index("step[4]")
    last = next(messages for _, _, messages in reversed(log) if messages[-1]["content"] != [{"text": SUMMARY_REQUEST}])
    assert last[0]["content"] == summary["content"] and last[1]["role"] == "assistant"
    assert len(last) == 1 + len(conv.messages) - removed - 1  # the summary, then the stored messages it keeps
    agent_requests = [messages for _, _, messages in log if messages[-1]["content"] != [{"text": SUMMARY_REQUEST}]]
    for messages in agent_requests:
        assert not validate(messages, mode="request", tools_configured=True)
    usage = [(m.get("metadata") or {}).get("usage", {}).get("totalTokens") for m in conv.messages]
    turns = [tokens for tokens in usage if tokens]
    assert max(turns[: turns.index(max(turns)) + 1]) > min(turns[turns.index(max(turns)) :])  # the context shrank


def test_a_crash_after_a_compaction_resumes_it_without_asking_the_model_for_that_summary_again(tmp_path):
    golden_log: list[Any] = []
    golden_store = LocalStore(tmp_path / "golden" / "sessions")
    golden = run_workflow(SPEC, _options(tmp_path / "golden", golden_log), store=golden_store)
    expected = comparable(golden_store.load(golden.session_id))
    # committed: the compaction before step[3]; not yet: step[3]'s prompt
    log: list[Any] = []
    store = LocalStore(tmp_path / "run" / "sessions")
    with pytest.raises(InjectedCrash):
        run_workflow(
            SPEC,
            _options(tmp_path / "run", log, crash_at("step[3]:clerk/turn[0]/prompt/store.before_commit")),
            store=store,
        )
    assert len(_summaries(log)) == 1
    (session_id,) = store.session_ids()
    resumed = resume(session_id, _options(tmp_path / "run", log), store=LocalStore(tmp_path / "run" / "sessions"))
    assert resumed.status == "completed"
    assert len(_summaries(log)) == len(_summaries(golden_log)) == 2  # only step[4]'s summary was asked for again
    assert first_difference(expected, comparable(LocalStore(tmp_path / "run" / "sessions").load(session_id))) is None


def test_a_crash_before_the_compaction_is_committed_asks_for_it_again_and_ends_the_same(tmp_path):
    golden = golden_run(tmp_path / "golden", SPEC)
    assert "step[3]:clerk/compaction/store.before_commit" in golden.point_ids
    # the judge compares the resumed run, run to its end, with the golden one (outputs, histories, states)
    assert crash_and_resume(golden, "step[3]:clerk/compaction/store.before_commit", tmp_path / "run") == []
    final = LocalStore(golden.workdir / "golden" / "sessions").load(golden.target.session_id)
    assert final.conversations["clerk"].cm_state["removed_message_count"] > 0


def test_summarization_model_summarizes_with_strands_cli_s_prompt(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        SPEC.read_text().replace(
            "preserve_recent_messages: 2", "preserve_recent_messages: 2\n    summarization_model: mini"
        )
    )
    log: list[Any] = []
    outcome = run_workflow(spec, _options(tmp_path, log), store=LocalStore(tmp_path / "sessions"))
    assert outcome.status == "completed"
    summaries = _summaries(log)
    assert summaries and {(model, prompt) for model, prompt, _ in summaries} == {("mini", SUMMARIZER_PROMPT)}
    assert all(model != "mini" for model, _, messages in log if messages[-1]["content"] != [{"text": SUMMARY_REQUEST}])


def test_turning_compaction_off_for_a_compacted_session_is_refused_naming_the_key(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.read_text())
    store = LocalStore(tmp_path / "sessions")
    with pytest.raises(InjectedCrash):
        run_workflow(
            spec, _options(tmp_path, [], crash_at("step[3]:clerk/turn[0]/prompt/store.before_commit")), store=store
        )
    spec.write_text(SPEC.read_text().replace("enabled: true", "enabled: false"))
    (session_id,) = store.session_ids()
    with pytest.raises(DurableError) as caught:
        resume(session_id, _options(tmp_path, []), store=LocalStore(tmp_path / "sessions"))
    assert exit_code_for(caught.value) == 3 and "context_policy.compaction" in str(caught.value)


def test_the_chaos_explorer_finds_every_crash_point_of_a_compacting_run_resumes_identically(tmp_path):
    """What `pytest --strands-chaos` runs on this spec: every crash point of the golden run, crashed in process,
    resumed, and judged by the oracle (identical outputs and histories, nothing committed redone)."""
    golden = run_golden(ChaosTarget(SPEC), tmp_path / "golden")
    ids = [point.id for point in golden.points]
    assert {"step[3]:clerk/compaction/store.before_commit", "step[4]:clerk/compaction/store.after_commit"} <= set(ids)
    outcomes = [explore_point(golden, point_id, tmp_path / f"p{index}") for index, point_id in enumerate(ids)]
    failures = [outcome.describe() for outcome in outcomes if not outcome.ok]
    assert len(outcomes) > 150 and not failures, "\n".join(failures[:5])


class _Overflowing(_Requests):
    """A provider whose context window holds fewer than `limit` messages: a longer request fails as real
    providers fail (the SDK's ContextWindowOverflowException), which makes the SDK summarize mid-unit."""

    limit = 12

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kw: Any
    ) -> AsyncIterator[Any]:
        from strands.types.exceptions import ContextWindowOverflowException

        if len(messages) >= self.limit and messages[-1]["content"] != [{"text": SUMMARY_REQUEST}]:
            self.log.append(("overflow", "", []))
            raise ContextWindowOverflowException("input is too long for the context window")
        async for event in super().stream(messages, tool_specs, system_prompt, **kw):
            yield event


def _overflow_options(root: Path, log: list[Any], points: CrashPoints | None = None) -> RunOptions:
    def factory(*, agent_id: str, provider: str, model_id: Any, runtime: Any) -> Any:
        return _Overflowing(build_model(provider, model_id=model_id, runtime=runtime, seed=0), str(model_id), log)

    return RunOptions(out_dir=root / "out", model_factory=factory, crash_points=points or CrashPoints())


def test_a_context_overflow_summarizes_mid_unit_and_a_crash_after_it_resumes_the_compacted_conversation(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.read_text().replace("when_tokens_over: 1000", "when_tokens_over: 1000000"))
    golden_log: list[Any] = []
    golden_store = LocalStore(tmp_path / "golden" / "sessions")
    golden = run_workflow(spec, _overflow_options(tmp_path / "golden", golden_log), store=golden_store)
    assert golden.status == "completed"
    overflows = [entry for entry in golden_log if entry[0] == "overflow"]
    assert overflows and len(_summaries(golden_log)) == len(overflows)  # each overflow: one summary, then retried
    assert golden_store.load(golden.session_id).conversations["clerk"].cm_state["summary_message"] is not None
    # crash right after the first mid-unit compaction is committed (the unit's prompt was committed before it)
    points: list[str] = []
    probe = CrashPoints()
    probe.subscribe(points.append)
    run_workflow(
        spec, _overflow_options(tmp_path / "probe", [], probe), store=LocalStore(tmp_path / "probe" / "sessions")
    )
    target = next(p for p in points if p.id.endswith("/compaction/store.after_commit"))
    unit = target.path.split(":")[0]
    assert any(p.id.startswith(f"{unit}:clerk/turn[0]/prompt") for p in points[: points.index(target)])
    log: list[Any] = []
    store = LocalStore(tmp_path / "run" / "sessions")
    with pytest.raises(InjectedCrash):
        run_workflow(spec, _overflow_options(tmp_path / "run", log, crash_at(target.id)), store=store)
    asked = len(_summaries(log))
    (session_id,) = store.session_ids()
    fresh = LocalStore(tmp_path / "run" / "sessions")
    assert resume(session_id, _overflow_options(tmp_path / "run", log), store=fresh).status == "completed"
    assert len(_summaries(log)) == len(_summaries(golden_log)) and asked >= 1
    expected = comparable(golden_store.load(golden.session_id))
    assert first_difference(expected, comparable(LocalStore(tmp_path / "run" / "sessions").load(session_id))) is None
