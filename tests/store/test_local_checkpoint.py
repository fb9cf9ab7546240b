"""Checkpoints of the local journal: a compacted journal folds to the state the whole history folds to, opening
reads the live state (not the history), a power cut anywhere in a checkpoint loses no commit that had returned
durable, and `sessions check|repair|export` read checkpointed sessions as any other."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from strands_durable import LocalStore
from strands_durable.faults.classes.power import (
    DiskModel,
    after_power_cut,
    crash_states,
    materialize,
    persistence_points,
)
from strands_durable.faults.classes.recording import RecordingFileOps
from strands_durable.operations.check import check_session
from strands_durable.operations.export import export_session
from strands_durable.operations.repair import repair_session
from strands_durable.store import SessionState
from strands_durable.store.fileops import FileOps
from strands_durable.store.journal import JOURNAL_NAME, read_journal
from strands_durable.store.layout import new_session_id


def _message(index: int, conv: str = "c.a", size: int = 100) -> dict[str, Any]:
    role = "user" if index % 2 == 0 else "assistant"
    message: dict[str, Any] = {"role": role, "content": [{"text": f"{conv} {index} " + "x" * size}]}
    if role == "assistant":
        message["metadata"] = {"usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}}
    return {"type": "message", "conv": conv, "agent": "a", "unit": f"u{index // 4}", "index": index, "message": message}


def _commits(count: int) -> list[list[dict[str, Any]]]:
    """A mix of every kind the fold keeps: messages, tool results settled later, units replaced, pattern state
    deltas, attempts and conversation state."""
    out: list[list[dict[str, Any]]] = []
    for i in range(count):
        events = [_message(i)]
        if i % 5 == 0:
            events.append({"type": "tool_result", "conv": "c.a", "result": {"toolUseId": f"t{i}", "status": "success"}})
        if i % 7 == 0:
            events.append({"type": "unit", "unit": f"u{i % 3}", "record": {"response": "r" * 50, "n": i}})
            events.append({"type": "pattern_state", "state": {"step": i, "history": list(range(i // 7 + 1))}})
        if i % 11 == 0:
            events.append({"type": "attempt", "unit": "u0", "conv": "c.a", "attempt": i, "error": "e", "wait_s": 0})
            events.append({"type": "conversation", "conv": "c.b", "agent": "b", "agent_state": {"n": i}})
            events.append({"type": "tool_started", "conv": "c.b", "tool_use_id": f"s{i}"})
        out.append(events)
    return out


def _create(store: LocalStore) -> Any:
    return store.create({"session_id": new_session_id(), "workflow_name": "w", "pattern": "chain"}, b"spec")


def _comparable(state: SessionState) -> dict[str, Any]:
    return {
        "seq": state.seq,
        "synced_seq": state.synced_seq,
        "status": state.status,
        "meta": state.meta,
        "pattern_state": state.pattern_state,
        "units": state.units,
        "attempts": state.attempts,
        "usage": state.usage(),
        "conversations": {
            key: (
                conv.messages,
                conv.units,
                conv.seqs,
                conv.tool_results,
                sorted(conv.tools_started),
                conv.agent_state,
                conv.cm_state,
                conv.generation,
            )
            for key, conv in state.conversations.items()
        },
    }


def _journal_records(store: LocalStore, session_id: str) -> list[dict[str, Any]]:
    return read_journal(Path(JOURNAL_NAME), store.journal_bytes(session_id)).records


def test_a_checkpointed_journal_folds_to_the_state_of_its_whole_history(tmp_path: Path) -> None:
    whole, compacted = LocalStore(tmp_path / "whole"), LocalStore(tmp_path / "compacted", checkpoint_min_bytes=1)
    sessions = [_create(whole), _create(compacted)]
    for events in _commits(120):
        for session in sessions:
            session.commit(events, durable=False)
    live = sessions[1].state
    for session in sessions:
        session.close()
    ids = [session.session_id for session in sessions]
    records = _journal_records(compacted, ids[1])
    assert "checkpoint" in records[1] and len(records) < 10  # compacted, and again at close
    assert len(_journal_records(whole, ids[0])) == 122
    loaded = compacted.load(ids[1])
    expected = _comparable(whole.load(ids[0]))
    for state in (loaded, live):
        got = _comparable(state)
        got["meta"] = {**got["meta"], "session_id": expected["meta"]["session_id"], "created_at": None}
        expected["meta"]["created_at"] = None
        assert got == expected
    reopened = compacted.open(ids[1])  # and it goes on committing after its checkpoint
    reopened.commit([_message(120)])
    reopened.close()
    assert [m["content"][0]["text"][:9] for m in compacted.load(ids[1]).conversations["c.a"].messages[-2:]] == [
        "c.a 119 x",
        "c.a 120 x",
    ]


def test_opening_reads_the_live_state_not_the_history_of_commits(tmp_path: Path) -> None:
    """2,000 commits each replacing one 2 KB unit outcome: the history is 4 MB, the live state 2 KB."""

    def history(store: LocalStore) -> tuple[int, int]:
        session = _create(store)
        for i in range(2000):
            session.commit([{"type": "unit", "unit": "u", "record": {"response": f"{i} " + "y" * 2000}}], durable=False)
        session.close()
        size = store.journal_path(session.session_id).stat().st_size
        tracemalloc.start()
        store.open(session.session_id).close()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return size, peak

    kept_size, kept_peak = history(LocalStore(tmp_path / "kept", checkpoint_min_bytes=1 << 40))
    size, peak = history(LocalStore(tmp_path / "compacted", checkpoint_min_bytes=256 << 10))
    assert kept_size > 4_000_000
    assert size < (256 << 10) + 10_000  # a 2 KB checkpoint and at most the 256 KB of history not yet compacted
    assert peak < kept_peak / 10


class _Promises:
    """The op-log index at which each durable commit had returned to its caller."""

    def __init__(self, ops: RecordingFileOps) -> None:
        self.ops = ops
        self.marks: list[tuple[int, int]] = []

    def returned(self, seq: int) -> None:
        self.marks.append((len(self.ops.log), seq))

    def seq_at(self, op_index: int) -> int:
        return max((seq for at, seq in self.marks if at <= op_index), default=-1)


def test_a_power_cut_anywhere_in_a_checkpoint_loses_no_durable_commit(tmp_path: Path) -> None:
    base = tmp_path / "disk"
    ops = RecordingFileOps()
    store = LocalStore(base / "sessions", fileops=ops, checkpoint_min_bytes=1)
    promises = _Promises(ops)
    session = _create(store)
    session_id = session.session_id
    promises.returned(0)
    committed = {}
    for i, events in enumerate(_commits(40)):
        seq = session.commit(events, durable=i % 3 != 2)  # some not durable: a later durable commit covers them
        committed[seq] = events[0]["message"]
        if i % 3 != 2:
            promises.returned(seq)
    session.close()
    log = list(ops.log)
    renames = [op for op in log if op.kind == "rename" and op.dst is not None and op.dst.name == JOURNAL_NAME]
    assert len(renames) >= 4  # checkpoints were written while committing

    model = DiskModel(base)
    explored = mid_checkpoint = 0
    points = set(persistence_points(log))
    for index in range(len(log) + 1):
        if index in points:
            promised = promises.seq_at(index)
            for state in crash_states(model, index):
                materialize(state, base)
                explored += 1
                journal_dir = base / "sessions" / f"session_{session_id}"
                if any(p.name.startswith(f".{JOURNAL_NAME}.") for p in state.files if p.parent == journal_dir):
                    mid_checkpoint += 1
                if promised < 0 and not (journal_dir / JOURNAL_NAME).exists():
                    continue  # power cut before the session's creation returned
                reader = after_power_cut(base / "sessions")
                recovered = reader.open(session_id)  # never refused: a checkpoint is never half visible
                messages = recovered.state.conversations.get("c.a")
                got = messages.messages if messages else []
                assert recovered.state.seq >= promised, (state.kind, index)
                want = [committed[seq] for seq in sorted(committed) if seq <= recovered.state.seq]
                assert got == want, (state.kind, index)
                recovered.abandon()
        if index < len(log):
            model.apply(index, log[index])
    assert explored > 200 and mid_checkpoint > 10


def test_check_repair_and_export_read_a_checkpointed_session(tmp_path: Path) -> None:
    store = LocalStore(tmp_path, checkpoint_min_bytes=1)
    session = _create(store)
    for index in range(30):
        session.commit([_message(index)])
    session.close()
    session_id = session.session_id
    assert "checkpoint" in _journal_records(store, session_id)[1]
    assert [p for p in check_session(store, session_id) if p.severity == "error"] == []
    exported = export_session(store, session_id)
    assert len(exported["agents"]["c.a"]["messages"]) == 30
    damaged = store.message_files(session_id, 3)[0]
    damaged.write_text("{}")
    assert any(p.where.endswith("message_3.json") for p in check_session(store, session_id))
    report = repair_session(store, session_id)
    assert report.rewritten == ["agents/c.a/messages/message_3.json"]
    assert [p for p in check_session(store, session_id) if p.severity == "error"] == []
    after = export_session(store, session_id)
    assert {k: v for k, v in after.items() if k != "session"} == {k: v for k, v in exported.items() if k != "session"}


@pytest.mark.parametrize("where", ["write", "rename", "directory fsync"])
def test_a_checkpoint_that_fails_stops_commits_and_loses_nothing(tmp_path: Path, where: str) -> None:
    class FailingCheckpoint(FileOps):
        armed = False

        def write_file(self, path: Path, data: bytes, *, sync: bool) -> None:
            if self.armed and where == "write" and JOURNAL_NAME in path.name:
                raise OSError(28, "No space left on device")
            super().write_file(path, data, sync=sync)

        def rename(self, src: Path, dst: Path) -> None:
            if self.armed and where == "rename" and dst.name == JOURNAL_NAME:
                raise OSError(28, "No space left on device")
            super().rename(src, dst)

        def fsync_dir(self, path: Path) -> None:
            if self.armed and where == "directory fsync" and (path / JOURNAL_NAME).exists():
                raise OSError(5, "Input/output error")
            super().fsync_dir(path)

    from strands_durable.errors import StorageIOError

    ops = FailingCheckpoint()
    store = LocalStore(tmp_path, fileops=ops, checkpoint_min_bytes=2000)
    session = _create(store)
    ops.armed = True
    acknowledged = -1
    with pytest.raises(StorageIOError, match="cannot write a checkpoint"):
        for events in _commits(100):
            acknowledged = session.commit(events)
    with pytest.raises(StorageIOError):
        session.commit([_message(100)])  # the session is stopped: nothing more is acknowledged
    session.abandon()
    ops.armed = False
    state = LocalStore(tmp_path).load(session.session_id)
    assert state.seq >= acknowledged + 1  # the commit whose checkpoint failed was durable before it


def test_a_session_compacted_at_close_is_listed_from_its_short_last_record(tmp_path: Path) -> None:
    store = LocalStore(tmp_path, checkpoint_min_bytes=1)
    session = _create(store)
    for index in range(30):
        session.commit([_message(index, size=5000)], durable=False)
    session.close()
    records = _journal_records(store, session.session_id)
    assert "checkpoint" in records[1] and records[-1]["views_boot"] and not records[-1]["events"]
    data = store.journal_bytes(session.session_id)
    assert len(data.rsplit(b"\n", 2)[-2]) < 200  # the close's mark, not the checkpoint, ends the journal
    (summary,) = store.list()
    assert summary.session_id == session.session_id and summary.status == "running"


def test_a_session_closed_without_commits_is_not_compacted_and_reopens(tmp_path: Path) -> None:
    store = LocalStore(tmp_path, checkpoint_min_bytes=1)
    session = _create(store)
    session.close()
    assert [record["seq"] for record in _journal_records(store, session.session_id)] == [0, 1]
    store.open(session.session_id).close()  # nothing committed, every readable file trusted: nothing written
    assert [record["seq"] for record in _journal_records(store, session.session_id)] == [0, 1]
    state = store.load(session.session_id)
    assert state.views_seq == 1 and state.views_trusted(store.fileops.boot_id())


def test_a_checkpoint_of_the_header_alone_reads_back(tmp_path: Path) -> None:
    from strands_durable.store.checkpoint import compacted_journal
    from strands_durable.store.journal import encode_line

    store = LocalStore(tmp_path)
    session = _create(store)
    session.abandon()
    header = store.journal_bytes(session.session_id)
    data = compacted_journal(header, store.load(session.session_id)) + encode_line({"seq": 1, "events": []}).data
    assert [record["seq"] for record in read_journal(Path(JOURNAL_NAME), data).records] == [0, 0, 1]


def test_a_checkpoint_keeps_units_and_conversations_in_commit_order(tmp_path: Path) -> None:
    """Units and conversations are read in commit order (a unit's notes step number, export's `outputs`); a
    checkpoint keeps that order rather than sorting the keys (`step[10]` would come before `step[2]`)."""
    store = LocalStore(tmp_path, checkpoint_min_bytes=1)
    session = _create(store)
    sid = session.state.session_id
    for index in range(12):
        conv = f"c.{'zyx'[index % 3]}"
        session.commit([{"type": "conversation", "conv": conv, "agent": "a", "agent_state": {"n": index}}])
        session.commit([{"type": "unit", "unit": f"step[{index}]", "record": {"response": f"r{index}"}}])
    session.close()
    assert "checkpoint" in _journal_records(store, sid)[1]
    state = LocalStore(tmp_path).load(sid)
    assert list(state.units) == [f"step[{index}]" for index in range(12)]
    assert list(state.conversations) == ["c.z", "c.y", "c.x"]
