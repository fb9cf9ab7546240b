"""Sessions written by release 0.1.0 (tests/store/data/release_0_1_0: a chain run of
examples/chain-research.strands.yaml and a plain-Python agent session, written by that release's code and
committed as they were) still open, fold to what they held, and are byte for byte what today's journal writes."""

from __future__ import annotations

import shutil
from pathlib import Path

from strands_durable import LocalStore, RunOptions, run_workflow
from strands_durable.store.journal import JOURNAL_NAME, encode_line, read_journal

RELEASE = Path(__file__).parent / "data" / "release_0_1_0"
CHAIN = "d46fc774-dc4e-41c0-99bc-2ad6c9cdd707"
AGENT = "expenses-1"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _sessions(tmp_path: Path) -> Path:
    sessions = tmp_path / "sessions"
    shutil.copytree(RELEASE, sessions)
    return sessions


def _event_shapes(journal: bytes) -> dict[str, set[tuple[str, ...]]]:
    """Each event kind with the sets of fields its events carry."""
    shapes: dict[str, set[tuple[str, ...]]] = {}
    for record in read_journal(JOURNAL_NAME, journal).records:
        for event in record.get("events", ()):
            shapes.setdefault(event["type"], set()).add(tuple(sorted(event)))
    return shapes


def test_sessions_of_the_previous_release_open_and_fold_to_what_they_held(tmp_path: Path) -> None:
    store = LocalStore(_sessions(tmp_path))
    assert sorted(store.session_ids()) == sorted([CHAIN, AGENT])
    chain = store.open(CHAIN)  # the lease, the journal, every stored history validated, the readable files checked
    assert chain.state.status == "completed"
    assert {key: len(conv.messages) for key, conv in chain.state.conversations.items()} == {
        "researcher": 10,
        "writer": 6,
    }
    assert sorted(chain.state.units) == ["step[0]", "step[1]", "step[2]"] and len(chain.state.artifacts) == 1
    chain.close()
    agent = store.open(AGENT)
    assert agent.state.status == "idle" and len(agent.state.conversations["default"].messages) == 8
    assert agent.state.usage()["total"] > 0
    agent.close()
    assert {summary.session_id: summary.status for summary in store.list()} == {CHAIN: "completed", AGENT: "idle"}
    for session_id in (CHAIN, AGENT):
        assert [f for f in store.inspect(session_id).findings if f.severity == "error"] == []


def test_todays_encoder_writes_the_previous_release_lines_byte_for_byte() -> None:
    for session_id in (CHAIN, AGENT):
        data = (RELEASE / f"session_{session_id}" / JOURNAL_NAME).read_bytes()
        contents = read_journal(JOURNAL_NAME, data, lines=True)
        assert not contents.torn_tail and contents.lines is not None
        assert b"".join(encode_line(line.record).data for line in contents.lines) == data


def test_a_run_today_journals_the_same_event_shapes_as_the_previous_release(tmp_path: Path) -> None:
    """The same spec run today writes every event kind with the fields 0.1.0 wrote (the typed constructors
    changed how events are built, not what is stored)."""
    store = LocalStore(tmp_path / "today")
    options = RunOptions(out_dir=tmp_path / "out")
    outcome = run_workflow(EXAMPLES / "chain-research.strands.yaml", options, store=store)
    before = _event_shapes((RELEASE / f"session_{CHAIN}" / JOURNAL_NAME).read_bytes())
    today = _event_shapes(store.journal_bytes(outcome.session_id))
    assert today == before
