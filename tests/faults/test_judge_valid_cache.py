"""The judge validates each stored history once per content: the very list, an equal one, or a cut of a longer
one found valid (a crash point of a long conversation is read back at a new length each time) is not validated
again; anything else is, and its problems are found."""

from __future__ import annotations

from strands_durable.faults.kit import judge
from strands_durable.store.state import SessionState


def test_the_start_of_a_history_found_valid_is_valid_without_validating_it_again(monkeypatch) -> None:
    """A crash point of a long conversation is read back at a new length each time: a cut of the history found
    valid before it is valid (tests/history's property), found by comparison, not by validating it again; a list
    that is not such a cut is validated, and its problems found."""
    turns = [("user", "question"), ("assistant", "answer")] * 30
    history = [{"role": role, "content": [{"text": f"{text} {i}"}]} for i, (role, text) in enumerate(turns)]
    validated: list[int] = []
    real = judge.history_violations
    monkeypatch.setattr(
        judge, "history_violations", lambda key, messages: validated.append(len(messages)) or real(key, messages)
    )
    state = SessionState()
    conv = state.conversation("c.a", "a")
    valid: judge.ValidHistories = {}
    conv.messages = list(history)
    assert judge.stored_valid(state, "whole", valid) == []
    for length in (59, 31, 2, 0):
        conv.messages = [dict(m) for m in history[:length]]  # equal messages, other objects (read back from disk)
        assert judge.stored_valid(state, f"cut at {length}", valid) == []
    assert validated == [60]
    conv.messages = [*history[:10], {"role": "assistant", "content": [{"text": "two in a row"}]}]
    assert [rule for rule, _ in judge.stored_valid(state, "not a cut", valid)] == ["invalid-history"]
    conv.messages = [*history[:9], {"role": "assistant", "content": [{"text": "changed"}]}]
    assert judge.stored_valid(state, "a changed cut", valid) == []
    assert validated == [60, 11, 10]
