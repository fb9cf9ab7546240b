"""A resume of a long one-agent chain does per committed step only what it must (issue 37's chain bound), counted
with cProfile on real runs crashed and resumed (exact counts, independent of the machine's load):

- the committed steps are reported skipped in one loop, each by its lookup (`completed`) and the reporter's call,
  not by a `skip_committed` call per step; the reporter still hears of every step;
- each earlier step's template view (`steps[n]`) is built once per resume, not again for every step the resume
  runs (a resume of a long chain rebuilt all of them per step: quadratic in the steps it ran);
- a warm resume whose committed units were all found in the frozen spec before tells so by one set operation,
  without looking each unit up in Python (and still refuses a unit whose recorded agent it has not found);
- an invocation searches its conversation (every message of every unit that used it) for its own messages once, not
  again at each hook (each message it commits);
- a synthetic model answer encodes its request's canonical JSON (the whole window) once, not once for its digest
  and again for its estimated input tokens.
"""

from __future__ import annotations

import cProfile
from collections import Counter
from pathlib import Path

import pytest

from strands_durable import CrashPoints, InjectedCrash, LocalStore, RunOptions, resume, run_workflow
from strands_durable.crashpoints import CrashPoint
from strands_durable.errors import SpecError
from strands_durable.runner.positions import check_committed_positions
from strands_durable.runner.prepared import prepare
from strands_durable.runner.reporter import RecordingReporter
from strands_durable.store.state import copy_state
from strands_durable.testing.chain import refining_chain_text
from tests.profiled import calls_by_term

COUNTED = {  # (a file the function is in, its name) -> what one call is
    ("runner/units.py", "skip_committed"): "a committed step looked up by its own call",
    ("runner/patterns/steps.py", "step_view"): "a step view built",
    ("models/digest.py", "canonical_json"): "a JSON encoding of the canonical form",
    ("models/synthetic_policy.py", "answer"): "a synthetic answer",
    ("agent/durable.py", "unit_messages"): "a search of the conversation for a unit's messages",
    ("agent/durable.py", "message_added"): "a message committed by an invocation",
    ("agent/durable.py", "invoke"): "an invocation",
}


def _crash_before(unit: str) -> CrashPoints:
    points = CrashPoints()

    def crash(point: CrashPoint) -> None:
        if point.id == f"{unit}:a0/unit.before":
            raise InjectedCrash(point)

    points.subscribe(crash)
    return points


def _crashed_chain(tmp_path: Path, steps: int, crash_at: int, *, tools: bool = False) -> tuple[Path, LocalStore, str]:
    spec = tmp_path / f"chain-{steps}.strands.yaml"
    spec.write_text(refining_chain_text(steps, one_agent=True, tools=tools))
    store = LocalStore(tmp_path / "sessions")
    with pytest.raises(InjectedCrash):
        run_workflow(spec, RunOptions(crash_points=_crash_before(f"step[{crash_at}]")), store=store)
    (session_id,) = store.session_ids()
    return spec, store, session_id


def _resume_counts(
    tmp_path: Path, steps: int, crash_at: int, *, tools: bool = False
) -> tuple[Counter[str], RecordingReporter]:
    """Run a chain of `steps` steps that crashes before step `crash_at`, then count what its resume calls."""
    _, store, session_id = _crashed_chain(tmp_path, steps, crash_at, tools=tools)
    reporter = RecordingReporter()
    profile = cProfile.Profile()
    profile.enable()
    outcome = resume(session_id, RunOptions(reporter=reporter), store=store)
    profile.disable()
    assert outcome.status == "completed"
    counts = calls_by_term(profile, COUNTED)
    return counts, reporter


@pytest.mark.parametrize("steps", [8, 40])
def test_a_resume_reports_every_committed_step_without_a_lookup_call_per_step(tmp_path: Path, steps: int) -> None:
    counts, reporter = _resume_counts(tmp_path, steps, steps - 1)
    skipped = [call[1:] for call in reporter.calls if call[0] == "unit_skipped"]
    assert skipped == [(index, "a0", f"step[{index}]") for index in range(steps - 1)]  # every one, in order
    # the step the resume runs is checked by `skip_committed`; the committed ones before it in the loop
    assert counts["a committed step looked up by its own call"] <= 1, counts


def test_a_resume_builds_each_step_view_once(tmp_path: Path) -> None:
    # crashed before step 1: the resume runs 39 steps, each seeing every earlier one as `steps[n]`
    counts, _ = _resume_counts(tmp_path, 40, 1)
    # one view per step (the committed one and each run): 40; rebuilt per step run, it was 1 + 2 + ... + 40 = 820
    assert counts["a step view built"] <= 40, counts


def test_an_invocation_searches_its_conversation_once_not_at_every_message(tmp_path: Path) -> None:
    counts, _ = _resume_counts(tmp_path, 8, 1, tools=True)
    invocations, messages = counts["an invocation"], counts["a message committed by an invocation"]
    assert invocations == 7 and messages >= 3 * invocations  # prompts, answers and tool results
    # `invoke` finds the unit's messages, the invocation's first hook counts its turns, `complete_unit` its tokens;
    # the hooks after it carry the count over their own commits (a search per hook before: 76 for 30 messages)
    assert counts["a search of the conversation for a unit's messages"] <= 3 * invocations, counts


class _CountingMemo(set):
    """A positions memo that counts the pairs Python code looks up in it one by one (a set operation runs in C)."""

    lookups = 0

    def __contains__(self, pair: object) -> bool:
        _CountingMemo.lookups += 1
        return super().__contains__(pair)


def test_a_warm_resume_finds_every_committed_unit_in_its_memo_without_a_step_per_unit(tmp_path: Path) -> None:
    spec, store, session_id = _crashed_chain(tmp_path, 40, 39)
    prepared = prepare(session_id, spec)
    state = store.load(session_id)
    memo = _CountingMemo()
    check_committed_positions(prepared.spec, state, memo)  # the first look checks each unit
    assert len(memo) == len(state.units) == 39
    _CountingMemo.lookups = 0
    check_committed_positions(prepared.spec, copy_state(state), memo)
    assert _CountingMemo.lookups == 0  # one lookup per unit (39) on the old code, or without the set operation
    # a record the memo does not hold is still checked: a HITL answer recorded where the spec has an agent step
    hitl = copy_state(state)
    hitl.units["step[0]"] = {"status": "completed", "type": "hitl", "agent": None, "index": 0, "response": "yes"}
    with pytest.raises(SpecError, match="committed step 0 ran agent 'hitl' but the spec now names 'a0'"):
        check_committed_positions(prepared.spec, hitl, memo)


def test_a_synthetic_answer_encodes_its_request_once(tmp_path: Path) -> None:
    counts, _ = _resume_counts(tmp_path, 8, 4)
    answers = counts["a synthetic answer"]
    assert answers >= 4
    assert counts["a JSON encoding of the canonical form"] == answers, counts
