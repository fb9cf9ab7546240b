"""Sessions with chosen ids and the `idle` status through the CLI; directories that are not our sessions are
never listed, cleaned up or deleted."""

from __future__ import annotations

import json
from pathlib import Path

from strands_durable import LocalStore
from tests.cli.support import make_session


def _idle(store: LocalStore, session_id: str) -> None:
    session = make_session(store, workflow="agent", session_id=session_id)
    session.commit([{"type": "status", "status": "idle"}])
    session.close()


def test_a_chosen_id_is_shown_listed_and_deleted_by_its_full_name(strands, store: LocalStore) -> None:
    _idle(store, "Support.Bot-7")
    listed = strands("sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [(s["session_id"], s["status"]) for s in json.loads(listed.stdout)] == [("Support.Bot-7", "idle")]
    shown = strands("sessions", "show", "Support.Bot-7", "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["session"]["status"] == "idle", shown.stderr
    prefix = strands("sessions", "show", "Support.")
    assert prefix.returncode == 2 and prefix.stderr.strip() == "Error: Session not found: Support."
    deleted = strands("sessions", "delete", "Support.Bot-7", "--force")
    assert deleted.returncode == 0 and store.session_ids() == [], deleted.stderr


def test_idle_sessions_are_filtered_and_cleaned_up_like_paused_ones(strands, store: LocalStore) -> None:
    _idle(store, "agent-one")
    only_idle = strands("sessions", "list", "--status", "idle")
    assert only_idle.returncode == 0 and "agent-one" in only_idle.stdout and "idle" in only_idle.stdout
    cleaned = strands("sessions", "cleanup", "--older-than", "0s", "--status", "idle", "--force")
    assert cleaned.returncode == 0, cleaned.stderr
    assert store.session_ids() == []


def test_directories_that_are_not_our_sessions_are_never_touched(strands, store: LocalStore) -> None:
    root = store.root
    root.mkdir(parents=True, exist_ok=True)
    planted = {
        root / "session_not-ours" / "journal.log": b"somebody else's log\n",
        root / "session_half-made" / "lease.lock": b"",
        root / "session_half-made" / "lease.json": b'{"pid": 1, "host": "h", "started_at": 0}',
    }
    for path, data in planted.items():
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
    _idle(store, "ours")
    listed = strands("sessions", "list", "--json")
    assert [s["session_id"] for s in json.loads(listed.stdout)] == ["ours"], listed.stderr
    for foreign in ("not-ours", "half-made"):
        result = strands("sessions", "delete", foreign, "--force")
        assert result.returncode == 2 and result.stderr.strip() == f"Error: Session not found: {foreign}"
    # an idle agent session is cleaned up only when idle is asked for by name (issue 14: a chat must not vanish)
    cleaned = strands("sessions", "cleanup", "--older-than", "0s", "--status", "idle", "--force")
    assert cleaned.returncode == 0, cleaned.stderr
    assert all(Path(path).read_bytes() == data for path, data in planted.items())
    assert store.session_ids() == []


def test_a_bad_chosen_id_is_refused_naming_the_rule(store: LocalStore) -> None:
    import pytest

    from strands_durable.errors import UsageError

    with pytest.raises(UsageError) as raised:
        make_session(store, session_id="../escape")
    assert str(raised.value) == (
        "Not a valid session id: '../escape' "
        "(use a letter or digit, then up to 127 letters, digits, '.', '_' or '-', without '..')"
    )
    assert not store.root.exists() or list(store.root.iterdir()) == []
