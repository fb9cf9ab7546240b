"""The local store: journal recovery, corruption named and refused, permissions, foreign directories, leases."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from strands_durable import LocalStore
from strands_durable.errors import CorruptSession, ExitCode, SessionInUse, SessionNotFound, UsageError
from strands_durable.store.base import read_journal_bytes
from strands_durable.store.journal import JOURNAL_NAME
from strands_durable.store.layout import new_session_id


def message_event(index: int, role: str, text: str, conv: str = "writer") -> dict:
    message = {"role": role, "content": [{"text": text}]}
    if role == "assistant":
        message["metadata"] = {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}}
    return {"type": "message", "conv": conv, "agent": conv, "unit": "step[0]", "index": index, "message": message}


def new_session(store: LocalStore, messages: int = 4) -> str:
    session_id = new_session_id()
    session = store.create(
        {"session_id": session_id, "workflow_name": "w", "pattern": "chain", "variables": {"a": 1}}, b"name: w\n"
    )
    for index in range(messages):
        session.commit([message_event(index, "user" if index % 2 == 0 else "assistant", f"m{index}")])
    session.commit([{"type": "unit", "unit": "step[0]", "record": {"status": "completed", "response": "m3"}}])
    session.close()
    return session_id


def test_a_torn_journal_tail_is_cut_at_the_last_valid_record(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session_id = new_session(store)
    journal = store.directory_of(session_id) / JOURNAL_NAME
    before = store.load(session_id)
    with open(journal, "ab") as fh:
        fh.write(b'0badc0de {"seq": 99, "events": [')  # a write that never finished
    with store.open(session_id) as session:
        assert session.state.seq == before.seq
        assert len(session.state.conversations["writer"].messages) == 4
    assert journal.read_bytes().endswith(b"\n")


def test_a_corrupt_record_inside_the_journal_is_refused_and_named(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session_id = new_session(store)
    journal = store.directory_of(session_id) / JOURNAL_NAME
    lines = journal.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"m1", b"mX")  # the checksum no longer holds, and records follow it
    journal.write_bytes(b"\n".join(lines))
    with pytest.raises(CorruptSession) as caught:
        store.open(session_id)
    assert str(journal) in str(caught.value)
    assert caught.value.exit_code == ExitCode.SESSION_UNUSABLE


def test_a_corrupt_message_file_after_a_clean_close_is_refused_and_named(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session_id = new_session(store)
    target = store.directory_of(session_id) / "agents" / "writer" / "messages" / "message_2.json"
    target.write_text(target.read_text()[:20])
    with pytest.raises(CorruptSession) as caught:
        store.open(session_id)
    assert str(target) in str(caught.value)


def test_readable_files_lagging_after_a_crash_are_rederived_from_the_journal(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session_id = new_session_id()
    session = store.create({"session_id": session_id, "workflow_name": "w", "pattern": "chain"}, b"")
    session.commit([message_event(0, "user", "hello")])
    session.commit([message_event(1, "assistant", "hi")])
    session.abandon()  # a crash before the files were flushed: the last message file never reached the disk
    messages_dir = store.directory_of(session_id) / "agents" / "writer" / "messages"
    (messages_dir / "message_1.json").unlink(missing_ok=True)  # the background writer may have written it
    with store.open(session_id) as reopened:
        assert len(reopened.state.conversations["writer"].messages) == 2
    assert json.loads((messages_dir / "message_1.json").read_text())["message"]["content"] == [{"text": "hi"}]


def test_files_are_private_and_foreign_directories_are_left_alone(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    foreign = tmp_path / "my-notes"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    (tmp_path / "session_not-a-uuid").mkdir()
    session_id = new_session(store)
    for root, dirs, files in os.walk(store.directory_of(session_id)):
        for name in dirs:
            assert stat.S_IMODE(os.stat(Path(root) / name).st_mode) == 0o700
        for name in files:
            assert stat.S_IMODE(os.stat(Path(root) / name).st_mode) == 0o600, name
    assert [s.session_id for s in store.list()] == [session_id]
    assert (foreign / "keep.txt").read_text() == "mine"


def test_ids_are_resolved_by_unique_prefix_and_bad_ids_are_usage_errors(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session_id = new_session(store)
    assert store.resolve(session_id[:8]) == session_id
    with pytest.raises(UsageError):
        store.resolve(session_id[:5])
    with pytest.raises(UsageError):
        store.resolve("../../etc")
    with pytest.raises(SessionNotFound):
        store.resolve("00000000-0000-4000-8000-000000000000")


def test_a_hand_edited_variable_is_honoured_with_a_warning(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session_id = new_session(store)
    path = store.directory_of(session_id) / "session.json"
    view = json.loads(path.read_text())
    view["variables"]["a"] = 2
    path.write_text(json.dumps(view))
    with store.open(session_id) as session:
        assert session.state.meta["variables"] == {"a": 2}
        assert any("edited by hand" in w for w in session.warnings)
    assert store.load(session_id).meta["variables"] == {"a": 2}


HOLDER = textwrap.dedent(
    """
    import sys, time
    from strands_durable.store import LocalStore
    session = LocalStore(sys.argv[1]).open(sys.argv[2])
    print("holding", flush=True)
    time.sleep(60)
    """
)


def test_a_second_process_is_refused_while_the_first_lives_and_takes_over_once_it_is_dead(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session_id = new_session(store)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path), session_id], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(SessionInUse) as caught:
            LocalStore(tmp_path).open(session_id)
        assert f"in use by pid {holder.pid} on host" in str(caught.value)
        assert caught.value.exit_code == ExitCode.SESSION_UNUSABLE
        assert store.holder(session_id).pid == holder.pid
        listed = {s.session_id: s for s in store.list()}
        assert listed[session_id].status == "running" and not listed[session_id].stale
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    deadline = time.monotonic() + 10
    while store.holder(session_id) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert {s.session_id: s for s in store.list()}[session_id].display_status == "running (stale)"
    with LocalStore(tmp_path).open(session_id) as session:
        assert session.state.session_id == session_id


def known_prefix(store: LocalStore, session_id: str, records: int):
    """A KnownJournal of the session's first `records` journal records, folded from their bytes."""
    from strands_durable.store.base import KnownJournal
    from strands_durable.store.journal import read_journal
    from strands_durable.store.state import fold

    journal = store.directory_of(session_id) / JOURNAL_NAME
    data = journal.read_bytes()
    end = 0
    for _ in range(records):
        end = data.index(b"\n", end) + 1
    return journal, KnownJournal(session_id, data[:end], fold(read_journal(journal, data[:end]).records))


def test_a_known_journal_prefix_reads_as_the_whole_journal_does(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session_id = new_session(store, messages=6)
    _, known = known_prefix(store, session_id, 3)
    with LocalStore(tmp_path).knowing(known).open(session_id) as session:
        assert session.state == store.load(session_id)
        session.commit([message_event(6, "user", "m6")])
    assert len(known.state.conversations["writer"].messages) == 2  # the known state was never changed
    reread = LocalStore(tmp_path).knowing(known).load(session_id)
    assert reread == store.load(session_id)
    assert len(reread.conversations["writer"].messages) == 7
    for seq in range(reread.seq + 1):  # a past state, before, at and after the known prefix
        past = LocalStore(tmp_path).knowing(known).load(session_id, upto_seq=seq)
        assert past.seq == seq
        assert past == store.load(session_id, upto_seq=seq)
    assert len(store.load(session_id, upto_seq=4).conversations["writer"].messages) == 4


def test_a_known_prefix_is_trusted_only_for_the_very_bytes_it_names(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session_id = new_session(store)
    journal, known = known_prefix(store, session_id, 3)
    data = journal.read_bytes()
    journal.write_bytes(data.replace(b'"m1"', b'"mX"', 1))  # inside the prefix: the checksum no longer holds
    with pytest.raises(CorruptSession, match="bad checksum"):
        LocalStore(tmp_path).knowing(known).open(session_id)
    journal.write_bytes(data)
    other = LocalStore(tmp_path)
    other_id = new_session(other)
    assert LocalStore(tmp_path).knowing(known).load(other_id) == other.load(other_id)  # another journal


def test_after_a_known_prefix_a_torn_tail_is_cut_and_a_broken_history_refused(tmp_path: Path) -> None:
    from strands_durable.store.journal import encode_line

    store = LocalStore(tmp_path)
    session_id = new_session(store)
    journal, known = known_prefix(store, session_id, 4)
    whole = journal.read_bytes()
    with open(journal, "ab") as fh:
        fh.write(b'0badc0de {"seq": 99, "events": [')  # a write that never finished
    with LocalStore(tmp_path).knowing(known).open(session_id) as session:
        assert session.state.seq == store.load(session_id).seq
    assert journal.read_bytes().startswith(whole)
    seq = store.load(session_id).seq + 1
    with open(journal, "ab") as fh:  # two assistant messages in a row, in the conversation the prefix holds valid
        fh.write(
            encode_line({"seq": seq, "at": "2026-01-01T00:00:00Z", "events": [message_event(4, "assistant", "x")]}).data
        )
    with pytest.raises(CorruptSession, match="stored history breaks V2"):
        LocalStore(tmp_path).knowing(known).open(session_id)


def test_a_known_journal_prefix_is_given_through_knowing_not_a_constructor_parameter(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="known_journal"):
        LocalStore(tmp_path, known_journal=None)  # type: ignore[call-arg]
    storage = Path(__file__).resolve().parents[2] / "docs" / "storage.md"
    assert "known_journal" not in storage.read_text()


def test_a_session_seeded_from_a_journal_prefix_opens_as_the_prefix_folds(tmp_path: Path) -> None:
    """The fault kit's seeding capability: header + a tail of whole records taken from another journal of the same
    session is a session a new process opens at exactly the state those records fold to."""
    source = LocalStore(tmp_path / "a")
    session_id = new_session(source)
    data = source.journal_bytes(session_id)
    assert data == source.journal_path(session_id).read_bytes()
    lines = data.splitlines(keepends=True)
    header, *_ = read_journal_bytes(lines[0]).records
    seeded = LocalStore(tmp_path / "b")
    journal = seeded.seed(
        session_id, header=header, tail=b"".join(lines[1:3]), spec_snapshot=source.spec_snapshot_bytes(session_id)
    )
    assert journal == b"".join(lines[:3])
    assert seeded.spec_snapshot_bytes(session_id) == b"name: w\n"
    with seeded.open(session_id) as session:
        assert session.state.seq == 2
        assert [m["content"][0]["text"] for m in session.state.conversations["writer"].messages] == ["m0", "m1"]
    contents = read_journal_bytes(data + b'0badc0de {"seq": 99')
    assert contents.torn_tail and contents.valid_length == len(data)
    assert [p.parts[-3] for p in source.message_files(session_id, 1)] == ["writer"]
    assert [p.name for p in source.conversation_dirs(session_id)] == ["writer"]
