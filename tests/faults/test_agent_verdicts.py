"""The gate does not fail our own manager on a correct agent. The trip booking (concurrent tools, the
non-idempotent ones marked, `agent.state`, a sliding window that trims) passes at every point as a plain Agent, a
Graph and a Swarm under `DurableSessionManager`: the judge finds an "outcome unknown" result in the stored
conversation (the window trims it from `agent.messages`), does not count the later, legitimately different email as
an effect that happened twice, and compares `agent.state`, so a manager that commits a tool's state change with a
sibling's result fails exactly there."""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from strands_durable.faults.agents.engine import crash_at, explore, rule_counts, run_golden
from strands_durable.faults.agents.place import found_on
from strands_durable.faults.agents.run import AgentChaos
from strands_durable.faults.agents.trip import PROMPTS, TASK, trip_agent, trip_graph, trip_swarm
from strands_durable.faults.kit import judge
from strands_durable.history import OUTCOME_UNKNOWN, SYNTHESIZED_RESULT_TEXT
from strands_durable.sdk import DurableSessionManager


def _failing(outcomes: list[Any]) -> str:
    bad = [o for o in outcomes if not o.ok]
    return f"{len(bad)} of {len(outcomes)} failed:\n" + "\n\n".join(o.describe() for o in bad[:5])


@pytest.mark.slow
@pytest.mark.long
@pytest.mark.parametrize(
    ("factory", "prompts"),
    [(trip_agent, PROMPTS), (trip_graph, (TASK,)), (trip_swarm, (TASK,))],
    ids=["agent", "graph", "swarm"],
)
def test_our_manager_passes_every_point_of_a_correct_trip_booking(factory: Any, prompts: Any, tmp_path: Path) -> None:
    golden, outcomes = explore(AgentChaos(factory, prompts), tmp_path)
    assert not golden.problems, golden.problems
    assert len(outcomes) == len(golden.points) > 100 and all(o.fired for o in outcomes)
    assert all(o.ok for o in outcomes), _failing(outcomes)
    # what made it hard: many resumes answered a booking "outcome unknown", the email then differed, tools ran
    # concurrently and changed agent.state
    unknown = [r for o in outcomes for r in o.resumed if r.unknown]
    assert len(unknown) >= 10
    assert golden.concurrent
    booker = "" if factory is trip_agent else "booker"
    assert golden.states[booker] == {"flight": "TP123", "hotel": "Alfama Inn", "searches": 1}
    if factory is trip_agent:  # the window trimmed the first prompt's turns from what the agent loads
        assert len(golden.comparable[""]) < len(golden.stored["default"])
    else:
        assert golden.results[0]["order"] == ["planner", "booker", "mailer"]


class CommitsStateWithSibling(DurableSessionManager):
    """A planted bug: no change a tool makes to `agent.state` is attributed to it, so each is committed with
    whichever commit comes first, a sibling's result (the manager before tool-state attribution)."""

    def _before_tool_call(self, event: Any) -> None:
        pass


@pytest.mark.slow
def test_a_manager_that_commits_a_tools_state_with_a_siblings_result_fails_the_state_rule(tmp_path: Path) -> None:
    factory = functools.partial(trip_agent, manager=CommitsStateWithSibling)
    _, outcomes = explore(AgentChaos(factory, PROMPTS[:1]), tmp_path)
    counts = rule_counts(outcomes)
    assert set(counts) == {"state"} and counts["state"] >= 3, _failing(outcomes)
    failing = [f for o in outcomes for f in o.findings]
    assert all("agent.state differs from the golden run's at .searches" in f.detail for f in failing)


# -- the rules themselves ------------------------------------------------------------------------------------------


def _result(tool_use_id: str, text: str, status: str = "success") -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": tool_use_id, "status": status, "content": [{"text": text}]}}],
    }


def test_an_unknown_outcome_is_a_tool_result_that_says_outcome_unknown() -> None:
    assert OUTCOME_UNKNOWN == "outcome unknown" and OUTCOME_UNKNOWN in SYNTHESIZED_RESULT_TEXT  # the pinned marker
    messages = [
        {"role": "user", "content": [{"text": "Is the outcome unknown?"}]},  # a prompt saying it is not one
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "a", "name": "pay", "input": {}}}]},
        _result("a", "the bank timed out: outcome unknown", "error"),  # a user's own tool may say it too
    ]
    assert judge.unknown_outcomes(messages) == {"a": 2}
    assert judge.unknown_outcomes(messages[:2]) == {}


def test_a_booking_a_crash_hid_is_stored_with_a_result_that_says_outcome_unknown(tmp_path: Path) -> None:
    chaos = AgentChaos(trip_agent, PROMPTS[:1])
    golden = run_golden(chaos, tmp_path)
    outcome = crash_at(golden, "default/inv[0]/turn[0]/tool[1]:book_flight/tool.executed")
    assert outcome.ok, outcome.describe()
    for resumed in outcome.resumed:
        [conversation] = found_on(chaos, resumed.place).stored.values()
        results = {
            block["toolResult"]["toolUseId"]: block["toolResult"]
            for message in conversation
            for block in message["content"]
            if "toolResult" in block
        }
        assert len(resumed.unknown) == 2  # both bookings had started, neither's result was stored
        for call in resumed.unknown:
            assert results[call]["status"] == "error"
            assert "outcome unknown" in results[call]["content"][0]["text"]


def test_where_the_run_left_the_golden_path_an_effect_may_be_missing_but_never_twice() -> None:
    golden = {"outbox.txt": b"to me: flight TP123\n", "bookings.txt": b"flight TP123\nhotel Alfama Inn\n"}
    assert judge.no_effect_twice(golden, {"bookings.txt": b"hotel Alfama Inn\n"}) == []  # the flight: unknown
    twice = {"bookings.txt": b"flight TP123\nflight TP123\nhotel Alfama Inn\n"}
    assert [rule for rule, _ in judge.no_effect_twice(golden, twice)] == ["unknown-outcome"]


def test_the_state_rule_names_the_agent_and_the_key() -> None:
    assert judge.same_state({"": {"n": 1}}, {"": {"n": 1}}) == []
    [(rule, detail)] = judge.same_state({"booker": {"n": 1}}, {"booker": {"n": 2}})
    assert rule == "state" and detail.startswith("node booker's agent.state differs from the golden run's at .n")


def test_a_node_visited_afresh_may_run_a_stored_call_again_once_per_visit_a_plain_agent_never() -> None:
    golden, stored = Counter({"n/t1": 2, "t2": 1}), Counter({"n/t1": 1, "t2": 1})
    assert judge.stored_tools_not_rerun(["n/t1"], stored, golden) == []
    assert [rule for rule, _ in judge.stored_tools_not_rerun(["n/t1", "n/t1"], stored, golden)] == ["tool-rerun"]
    assert [rule for rule, _ in judge.stored_tools_not_rerun(["t2"], stored, golden)] == ["tool-rerun"]
