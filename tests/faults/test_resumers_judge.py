"""The two-resumers judge: which outcomes pass, and a barrier that gave up is named in the finding (a race that
did not happen as one is told apart from a backend that forks)."""

from strands_durable.faults.backends.resumers import judge, prompt_of


def _stored(*names: str) -> dict:
    return {"stored_raw": [{"content": [{"text": prompt_of(n)}]} for n in names]}


def test_one_winner_and_nothing_of_the_loser_passes() -> None:
    outcomes = {"A": {"ok": True}, "B": {"ok": False, "error": "SessionInUse: held"}}
    assert judge(outcomes, _stored("A")) == []


def test_a_loser_whose_prompt_is_stored_fails_and_a_barrier_that_gave_up_is_named() -> None:
    outcomes = {"A": {"ok": False, "error": "Message 7 exists", "alone_at": ["ready"]}, "B": {"ok": True}}
    [problem] = judge(outcomes, _stored("A", "B"))
    assert problem.startswith("resumer A got an error (Message 7 exists) but its prompt is stored")
    assert problem.endswith("(a barrier gave up waiting: A at ready)")


def test_both_returning_is_a_silent_fork() -> None:
    [problem] = judge({"A": {"ok": True}, "B": {"ok": True}}, _stored("A", "B"))
    assert "forked silently" in problem
