"""Pattern state is journaled as a change to the previous one, so the journal grows linearly with a workflow."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from strands_durable import LocalStore, MemoryStore
from strands_durable.store.journal import JOURNAL_NAME, read_journal
from strands_durable.store.layout import new_session_id
from strands_durable.store.state import SessionState, apply_event, pattern_state_delta

values = st.recursive(
    st.none() | st.integers(-3, 3) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=8,
)
states = st.dictionaries(st.sampled_from(["current_step", "step_history", "rounds", "path", "x"]), values, max_size=5)


def grown(old: dict, extra: dict) -> dict:
    """`old` with some of its lists extended and other keys changed, as patterns change their state."""

    def more(key: str) -> list:
        value = extra.get(key)
        return value if isinstance(value, list) else [value]

    new = {key: ([*value, *more(key)] if isinstance(value, list) else value) for key, value in old.items()}
    return {**new, **{k: v for k, v in extra.items() if k not in old}}


@settings(max_examples=300, derandomize=True, deadline=None)
@given(old=states, new=states, extra=states)
def test_applying_the_delta_gives_exactly_the_new_state(old: dict, new: dict, extra: dict) -> None:
    for target in (new, grown(old, extra)):
        state = SessionState(pattern_state=old)
        before = {k: (list(v) if isinstance(v, list) else v) for k, v in old.items()}
        apply_event(state, pattern_state_delta(old, target))
        assert state.pattern_state == target
        assert old == before  # the previous state (which readers may hold) is never changed in place


def test_a_growing_history_is_journaled_as_its_new_items(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session_id = new_session_id()
    session = store.create({"session_id": session_id, "workflow_name": "w", "pattern": "chain"}, b"name: w\n")
    history = []
    for step in range(30):
        history = [*history, {"index": step, "response": "r" * 200}]
        session.commit([{"type": "pattern_state", "state": {"current_step": step + 1, "step_history": history}}])
    session.close()
    journal = (store.directory_of(session_id) / JOURNAL_NAME).read_bytes()
    assert len(journal) < 30 * 400  # whole states would be ~30 * 15 * 230 bytes
    events = [e for r in read_journal(Path(JOURNAL_NAME), journal).records[1:] for e in r["events"]]
    assert events[-1] == {
        "type": "pattern_state",
        "set": {"current_step": 30},
        "extend": {"step_history": [{"index": 29, "response": "r" * 200}]},
    }
    assert store.load(session_id).pattern_state == {"current_step": 30, "step_history": history}
    memory = MemoryStore()
    memory_session = memory.create({"session_id": session_id, "workflow_name": "w", "pattern": "chain"}, b"")
    memory_session.commit([{"type": "pattern_state", "state": {"a": [1]}}, {"type": "pattern_state", "state": {}}])
    assert memory_session.state.pattern_state == {}
    assert memory.load(session_id).pattern_state == {}


def test_a_journal_with_whole_states_still_loads() -> None:
    state = SessionState()
    apply_event(state, {"type": "pattern_state", "state": {"current_step": 2, "step_history": [1, 2]}})
    apply_event(state, {"type": "pattern_state", "extend": {"step_history": [3]}, "unset": ["current_step"]})
    assert state.pattern_state == {"step_history": [1, 2, 3]}
