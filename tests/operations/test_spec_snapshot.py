"""The spec snapshot is checked and named (issue 39, item 3): `sessions check` finds a snapshot that is no longer
the spec the session was created from (its recorded sha256), and a resume whose spec file is gone names the
snapshot, not the deleted original, when the snapshot is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable import LocalStore
from tests.cli.support import HITL_CHAIN, make_session, session_ids_in, strands_command

pytestmark = pytest.mark.slow


def _paused(tmp_path: Path) -> tuple[LocalStore, str, Path]:
    spec = tmp_path / "review.strands.yaml"
    spec.write_text(HITL_CHAIN, encoding="utf-8")
    ran = strands_command("run", spec, cwd=tmp_path)
    assert ran.returncode == 19, ran.stderr
    return LocalStore(tmp_path / "sessions"), session_ids_in(ran.stdout + ran.stderr)[0], spec


@pytest.fixture(autouse=True)
def _sessions_here(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("STRANDS_SESSIONS_DIR", str(tmp_path / "sessions"))


def test_check_finds_a_garbage_spec_snapshot(tmp_path: Path) -> None:
    store, session_id, _ = _paused(tmp_path)
    assert strands_command("sessions", "check", session_id, cwd=tmp_path).returncode == 0
    snapshot = store.directory_of(session_id) / "spec_snapshot.yaml"
    snapshot.write_bytes(b"\x00\xffnot a spec at all")
    checked = strands_command("sessions", "check", session_id, cwd=tmp_path)
    assert checked.returncode == 1, checked.stdout
    assert (
        "error: spec_snapshot.yaml: does not hold the spec this session was created from (its sha256 differs)"
        in checked.stdout.splitlines()
    )
    snapshot.unlink()
    missing = strands_command("sessions", "check", session_id, cwd=tmp_path)
    assert missing.returncode == 1 and "error: spec_snapshot.yaml: missing" in missing.stdout, missing.stdout


def test_a_resume_without_its_spec_file_names_the_damaged_snapshot(tmp_path: Path) -> None:
    store, session_id, spec = _paused(tmp_path)
    spec.unlink()
    snapshot = store.directory_of(session_id) / "spec_snapshot.yaml"
    snapshot.write_bytes(b"version: 0\nname: [unclosed\n")
    resumed = strands_command("run", "--resume", session_id, "--hitl-response", "yes", cwd=tmp_path)
    assert resumed.returncode == 17, resumed.stderr
    assert resumed.stderr.splitlines()[-1] == (
        f"Error: Corrupt session file {snapshot}: does not hold the spec this session was created from "
        "(its sha256 differs)"
    )
    assert str(spec) not in resumed.stderr.splitlines()[-1]


def test_a_resume_without_its_spec_file_runs_an_intact_snapshot(tmp_path: Path) -> None:
    _, session_id, spec = _paused(tmp_path)
    spec.unlink()
    resumed = strands_command("run", "--resume", session_id, "--hitl-response", "yes", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "running the session's spec_snapshot.yaml" in resumed.stderr


def test_a_snapshot_that_does_not_load_is_named_in_the_spec_error(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "sessions")
    session = make_session(store)  # its spec file is gone, its snapshot holds `version: 0` only
    session.commit([{"type": "status", "status": "paused", "reason": "interrupted"}])
    session.close()
    resumed = strands_command("run", "--resume", session.state.session_id, cwd=tmp_path)
    assert resumed.returncode == 3, resumed.stderr
    snapshot = store.directory_of(session.state.session_id) / "spec_snapshot.yaml"
    assert resumed.stderr.splitlines()[-1].startswith(f"Error: {snapshot}"), resumed.stderr


@pytest.mark.parametrize("damage", ["garbage", "missing"])
def test_repair_names_a_damaged_snapshot_it_cannot_write_again(tmp_path: Path, damage: str) -> None:
    store, session_id, spec = _paused(tmp_path)
    snapshot = store.directory_of(session_id) / "spec_snapshot.yaml"
    if damage == "garbage":
        snapshot.write_bytes(b"{garbage: [")
    else:
        snapshot.unlink()
    repaired = strands_command("sessions", "repair", session_id, cwd=tmp_path)
    assert repaired.returncode == 17, (repaired.stdout, repaired.stderr)  # it said "nothing to repair", exit 0
    detail = "does not hold the spec this session was created from (its sha256 differs)"
    assert repaired.stderr == (
        f"Error: Corrupt session file {snapshot}: {detail if damage == 'garbage' else 'missing'}; `sessions repair` "
        f"cannot write it again (the journal keeps only its sha256): a resume still works while {spec} holds the "
        "session's spec; otherwise restore the snapshot from a backup, or delete the session\n"
    )
    resumed = strands_command("run", "--resume", session_id, "--hitl-response", "yes", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr  # what the error says: the spec file is still there
