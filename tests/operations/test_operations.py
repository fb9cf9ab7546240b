"""Session operations in-process: durations, cleanup ages and leases, auto-resume choice, repair's unit mapping."""

from __future__ import annotations

import datetime as dt

import pytest

from strands_durable import LocalStore, MemoryStore
from strands_durable.errors import UsageError
from strands_durable.operations import (
    apply_retention,
    check_session,
    cleanup_sessions,
    export_session,
    newest_unfinished,
    parse_age,
    retention_from_env,
)
from strands_durable.operations.repair import units_after_repair
from strands_durable.store import layout

LATER = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=3)


def _meta(spec_path: str = "/specs/a.yaml") -> dict:
    return {
        "session_id": layout.new_session_id(),
        "workflow_name": "w",
        "pattern": "chain",
        "spec_path": spec_path,
        "spec_hash": "0" * 64,
        "variables": {},
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(),
        "runtime": {},
    }


def _session(store, *, status: str | None = None, spec_path: str = "/specs/a.yaml", keep_open: bool = False):
    session = store.create(_meta(spec_path), b"")
    if status:
        session.commit([{"type": "status", "status": status}])
    if keep_open:
        return session
    session.abandon() if status is None else session.close()
    return session


@pytest.mark.parametrize(
    ("text", "seconds"), [("30s", 30), ("15m", 900), ("12h", 43200), ("7d", 604800), ("2w", 1209600), (" 1.5H ", 5400)]
)
def test_parse_age_reads_number_and_unit(text, seconds):
    assert parse_age(text).total_seconds() == seconds


@pytest.mark.parametrize("text", ["7", "d", "7 days", "-1d", ""])
def test_parse_age_rejects_anything_else_naming_the_option(text):
    with pytest.raises(UsageError, match=r"^--older-than: not a duration"):
        parse_age(text)


def test_retention_is_off_unless_configured(monkeypatch):
    monkeypatch.delenv("STRANDS_SESSIONS_RETENTION", raising=False)
    assert retention_from_env() is None and apply_retention(MemoryStore()) is None
    monkeypatch.setenv("STRANDS_SESSIONS_RETENTION", "off")
    assert retention_from_env() is None
    monkeypatch.setenv("STRANDS_SESSIONS_RETENTION", "7d")
    assert retention_from_env() == dt.timedelta(days=7)


def test_cleanup_deletes_by_age_and_status_and_never_a_live_lease(tmp_path):
    store = LocalStore(tmp_path)
    done = _session(store, status="completed")
    failed = _session(store, status="failed")
    stale = _session(store)
    live = _session(store, keep_open=True)
    try:
        assert cleanup_sessions(store, dt.timedelta(days=1)).deleted == []
        only_failed = cleanup_sessions(store, dt.timedelta(days=1), {"failed"}, now=LATER)
        assert [s.session_id for s in only_failed.deleted] == [failed.state.session_id]
        report = cleanup_sessions(store, dt.timedelta(days=1), now=LATER, keep={done.state.session_id})
        assert [s.session_id for s in report.deleted] == [stale.state.session_id]
        assert [(s.session_id, why.split(" by ")[0]) for s, why in report.skipped] == [
            (live.state.session_id, "in use")
        ]
        assert sorted(store.session_ids()) == sorted([done.state.session_id, live.state.session_id])
    finally:
        live.close()


def test_cleanup_reads_a_session_whole_before_deleting_it_and_keeps_one_damaged_in_the_middle(tmp_path):
    """The listing reads a journal's ends only: a record damaged between them lists as the status before it.
    Cleanup must not take that for an old session it may delete."""
    store = LocalStore(tmp_path)
    healthy = _session(store, status="paused").state.session_id
    session = store.create(_meta(), b"")
    for status in ("running", "paused", "running", "paused"):
        session.commit([{"type": "status", "status": status}])
    session.close()
    damaged = session.state.session_id
    journal = store.journal_path(damaged)
    data = bytearray(journal.read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit, in a record with records after it
    journal.write_bytes(bytes(data))
    assert {s.session_id: s.status for s in store.list()}[damaged] == "paused"  # the listing cannot tell

    for dry_run in (True, False):
        report = cleanup_sessions(store, dt.timedelta(days=1), now=LATER, dry_run=dry_run)
        assert [s.session_id for s in report.deleted] == [healthy]
        [(kept, why)] = report.skipped
        assert kept.session_id == damaged
        assert why.startswith("corrupt (journal.log: ") and why.endswith("`strands sessions delete` removes it"), why
    assert store.session_ids() == [damaged]
    assert journal.read_bytes() == bytes(data), "the damaged journal was changed"


def test_newest_unfinished_picks_the_latest_resumable_session_of_the_same_file(tmp_path):
    store = LocalStore(tmp_path)
    older = _session(store, status="paused")
    _session(store, status="paused", spec_path="/specs/other.yaml")
    newer = _session(store)  # running, holder dead: stale, resumable
    _session(store, status="completed")
    live = _session(store, keep_open=True)
    try:
        assert newest_unfinished(store, "/specs/a.yaml").session_id == newer.state.session_id
        store.delete(newer.state.session_id)
        assert newest_unfinished(store, "/specs/a.yaml").session_id == older.state.session_id
        assert newest_unfinished(store, "/specs/none.yaml") is None
    finally:
        live.close()


def test_export_and_check_work_on_any_store():
    store = MemoryStore()
    session = store.create(_meta(), b"")
    message = {"role": "user", "content": [{"text": "hi"}], "metadata": {"usage": {"totalTokens": 3}}}
    session.commit([{"type": "message", "conv": "a", "agent": "a", "unit": "step[0]", "index": 0, "message": message}])
    session.commit([{"type": "unit", "unit": "step[0]", "record": {"status": "completed", "response": "ok"}}])
    session.close()
    document = export_session(store, session.state.session_id)
    assert document["agents"] == {"a": {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}}
    assert document["outputs"] == {"units": {"step[0]": "ok"}, "last_response": "ok"}
    assert check_session(store, session.state.session_id) == []


def test_repaired_messages_keep_the_unit_of_the_message_they_came_from():
    use = {"toolUse": {"toolUseId": "t1", "name": "calc", "input": {}}}
    old = [
        {"role": "user", "content": [{"text": "a"}]},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [{"text": "b"}]},
        {"role": "assistant", "content": [{"text": "c"}]},
    ]
    result = {"toolResult": {"toolUseId": "t1", "status": "error", "content": [{"text": "x"}]}}
    new = [old[0], old[1], {"role": "user", "content": [result, {"text": "b"}]}, old[3]]
    assert units_after_repair(old, ["u0", "u0", "u1", "u1"], new) == ["u0", "u0", "u1", "u1"]
    invented = [{"role": "user", "content": [{"text": "(sep)"}]}, *old]
    assert units_after_repair(old, ["u0", "u0", "u1", "u1"], invented) == ["u0", "u0", "u0", "u1", "u1"]
