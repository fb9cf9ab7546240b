"""One damaged session never breaks a sessions directory (issue 39, items 1 and 7): every folder that looks like a
session is listed, one that cannot be read as `corrupt (<file>: <reason>)`; a command on it exits 17 naming the
file; `sessions delete` removes it and `sessions repair` rewrites a damaged readable file; the other sessions' rows,
commands and exit codes are what they were, and a run with STRANDS_SESSIONS_RETENTION set still exits 0."""

from __future__ import annotations

import json

import pytest

from strands_durable import LocalStore
from strands_durable.testing.hostile_files import CASES, case
from tests.cli.support import CHAIN, make_session, session_ids_in

JOURNAL_DAMAGE = [c for c in CASES if c.outcome == "corrupt"]

pytestmark = pytest.mark.slow


def _closed(store: LocalStore, workflow: str) -> str:
    session = make_session(store, workflow=workflow)
    session.commit([{"type": "status", "status": "paused", "reason": "interrupted"}])
    session.close()
    return session.state.session_id


def test_each_damaged_journal_is_listed_as_corrupt_named_by_every_command_and_deletable(strands, store) -> None:
    healthy = _closed(store, "healthy")
    before = strands("sessions", "list", "--json")
    assert before.returncode == 0, before.stderr
    damaged = {}
    for hostile in JOURNAL_DAMAGE:
        session_id = _closed(store, hostile.name)
        hostile.damage(store, session_id)
        damaged[hostile.name] = session_id

    listed = strands("sessions", "list", "--json")
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    rows = {row["session_id"]: row for row in json.loads(listed.stdout)}
    assert rows[healthy] == json.loads(before.stdout)[0]  # the healthy row is what it was before the damage
    for name, session_id in damaged.items():
        row = rows[session_id]
        assert row["status"] == "corrupt" and row["workflow_name"] == name, row
        assert row["reason"].startswith("journal.log: ") and case(name).reason in row["reason"], row
        assert row["display_status"] == f"corrupt ({row['reason']})"
    table = strands("sessions", "list")
    assert table.returncode == 0 and "corrupt (journal.log: missing)" in table.stdout, table.stdout
    only = json.loads(strands("sessions", "list", "--status", "corrupt", "--json").stdout)
    assert sorted(row["session_id"] for row in only) == sorted(damaged.values())

    journal_of = {sid: str(store.journal_path(sid)) for sid in damaged.values()}
    for name, session_id in damaged.items():
        for command in (("sessions", "show", session_id), ("sessions", "export", session_id)):
            result = strands(*command)
            assert result.returncode == 17, (name, command, result.stdout, result.stderr)
            assert result.stderr.startswith(f"Error: Corrupt session file {journal_of[session_id]}: "), result.stderr
            assert len(result.stderr.splitlines()) == 1
        resumed = strands("run", "--resume", session_id)
        assert resumed.returncode == 17 and journal_of[session_id] in resumed.stderr, (name, resumed.stderr)
        checked = strands("sessions", "check", session_id)
        assert checked.returncode == 1 and "error: journal.log: " in checked.stdout, (name, checked.stdout)
        repaired = strands("sessions", "repair", session_id)
        assert repaired.returncode == 17 and journal_of[session_id] in repaired.stderr, (name, repaired.stderr)
    # the healthy session answers every command as before
    assert strands("sessions", "show", healthy).returncode == 0
    assert strands("sessions", "check", healthy).returncode == 0

    for name, session_id in damaged.items():
        deleted = strands("sessions", "delete", session_id, "--force")
        assert deleted.returncode == 0, (name, deleted.stderr)
        assert not store.directory_of(healthy).parent.joinpath(f"session_{session_id}").exists()
    assert [row["session_id"] for row in json.loads(strands("sessions", "list", "--json").stdout)] == [healthy]


def test_a_too_deep_readable_file_is_repaired_and_never_breaks_the_listing(strands, store) -> None:
    session_id = _closed(store, "deep-view")
    view = case("session-json-too-deep").damage(store, session_id)
    listed = strands("sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [(row["session_id"], row["status"]) for row in json.loads(listed.stdout)] == [(session_id, "paused")]
    checked = strands("sessions", "check", session_id)
    assert checked.returncode == 1 and "error: session.json: " in checked.stdout, checked.stdout
    repaired = strands("sessions", "repair", session_id)
    assert repaired.returncode == 0 and "session.json: written again from the journal" in repaired.stdout
    assert strands("sessions", "check", session_id).returncode == 0
    assert json.loads(view.read_bytes())["session_id"] == session_id


def test_cleanup_and_a_run_with_retention_are_not_broken_by_a_damaged_session(strands, store, write_spec) -> None:
    damaged = _closed(store, "damaged")
    case("session-json-too-deep").damage(store, damaged)
    case("journal-too-deep-record").damage(store, damaged)
    cleaned = strands("sessions", "cleanup", "--older-than", "0s", "--force")
    assert cleaned.returncode == 0, cleaned.stderr
    assert f"Keeping {damaged} (-): corrupt (journal.log: " in cleaned.stdout, cleaned.stdout
    ran = strands("run", write_spec(CHAIN), env={"STRANDS_SESSIONS_RETENTION": "1s"})
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stderr and "cleanup" not in ran.stderr, ran.stderr
    run_id = session_ids_in(ran.stdout)[0]
    listed = {row["session_id"]: row["status"] for row in json.loads(strands("sessions", "list", "--json").stdout)}
    assert listed == {run_id: "completed", damaged: "corrupt"}  # never deleted unasked
