"""A session folder the user may not read (mode 000, or another user's) never breaks the sessions directory
(issue 39, item 6): `strands run`, `sessions list` and `sessions cleanup` work for every other session, the folder
is listed as `corrupt (session_<id>: permission denied)`, and a command on it exits 17 naming it. A session the
user may read but not delete is deleted by neither `sessions delete` nor `cleanup`: exit 12 naming it, the others
deleted.

The tests run as root, whom no mode stops; the commands then run as the unprivileged user `nobody` (`setpriv`),
in a directory that user owns. Run as another user, the commands run as that user (and only the mode-000 case
applies)."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from strands_durable import LocalStore
from tests.cli.support import CHAIN, make_session, session_ids_in

pytestmark = pytest.mark.slow

NOBODY = "nobody"
SHARED_TMP = "/dev/shm"  # world-writable and sticky, like /tmp, and searchable by every user


@pytest.fixture
def shared(tmp_path: Path) -> Iterator[Path]:
    """A directory the unprivileged user owns and can reach: the test's own directory when the tests do not run as
    root; otherwise one in /dev/shm (pytest's temp directories are closed to other users), removed at the end."""
    if os.geteuid() != 0:
        yield tmp_path
        return
    if shutil.which("setpriv") is None or not os.access(SHARED_TMP, os.W_OK):
        pytest.skip(f"running as root without setpriv or a writable {SHARED_TMP}: no way to run as another user")
    user = pwd.getpwnam(NOBODY)
    root = Path(tempfile.mkdtemp(prefix="strands-tests-unreadable-", dir=SHARED_TMP))
    os.chown(root, user.pw_uid, user.pw_gid)
    try:
        yield root
    finally:
        for entry in [root, *root.rglob("*")]:
            if entry.is_dir() and not entry.is_symlink():
                entry.chmod(0o700)
        shutil.rmtree(root)


def _as_user(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    prefix: list[str] = []
    if os.geteuid() == 0:
        user = pwd.getpwnam(NOBODY)
        prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups"]
    command = [*prefix, sys.executable, "-m", "strands_durable", *args]
    full_env = {**os.environ, "HOME": str(cwd), **env}
    return subprocess.run(command, cwd=cwd, env=full_env, input="", capture_output=True, text=True, timeout=120)


def _give(path: Path) -> None:
    """Hand a tree made by this (root) process to the unprivileged user."""
    if os.geteuid() != 0:
        return
    user = pwd.getpwnam(NOBODY)
    for entry in [path, *path.rglob("*")]:
        os.chown(entry, user.pw_uid, user.pw_gid, follow_symlinks=False)


@pytest.mark.parametrize("owner", ["mode-000", "another-user"])
def test_an_unreadable_session_folder_breaks_no_other_session(shared: Path, owner: str) -> None:
    if owner == "another-user" and os.geteuid() != 0:
        pytest.skip("needs root to make a folder another user owns")
    sessions = shared / "sessions"
    sessions.mkdir()
    store = LocalStore(sessions)
    mine = make_session(store, workflow="mine")
    mine.commit([{"type": "status", "status": "paused", "reason": "interrupted"}])
    mine.close()
    theirs = make_session(store, workflow="theirs")
    theirs.close()
    (shared / "spec.yaml").write_text(CHAIN, encoding="utf-8")
    _give(shared)
    locked = sessions / f"session_{theirs.state.session_id}"
    if owner == "mode-000":
        locked.chmod(0o000)
    else:  # root's folder, readable by root alone (the test process stays root: it owns it)
        for entry in [locked, *locked.rglob("*")]:
            os.chown(entry, 0, 0, follow_symlinks=False)
        locked.chmod(0o700)
    env = {"STRANDS_SESSIONS_DIR": str(sessions), "STRANDS_SESSIONS_RETENTION": "30d"}
    try:
        ran = _as_user("run", "spec.yaml", cwd=shared, env=env)
        assert ran.returncode == 0, ran.stderr
        assert "Traceback" not in ran.stderr and "Warning" not in ran.stderr, ran.stderr
        new_id = session_ids_in(ran.stdout)[0]

        listed = _as_user("sessions", "list", "--json", cwd=shared, env=env)
        assert listed.returncode == 0 and listed.stderr == "", listed.stderr
        rows = {row["session_id"]: row["display_status"] for row in json.loads(listed.stdout)}
        assert rows == {
            new_id: "completed",
            mine.state.session_id: "paused (interrupted)",
            theirs.state.session_id: f"corrupt ({locked.name}: permission denied)",
        }

        for command in (("sessions", "show"), ("run", "--resume"), ("sessions", "delete", "--force")):
            result = _as_user(*command, theirs.state.session_id, cwd=shared, env=env)
            assert result.returncode == 17, (command, result.stdout, result.stderr)
            assert result.stderr == f"Error: Cannot read session file {locked}: permission denied\n", result.stderr

        cleaned = _as_user("sessions", "cleanup", "--older-than", "0s", "--force", cwd=shared, env=env)
        assert cleaned.returncode == 0, cleaned.stderr
        assert {
            row["session_id"] for row in json.loads(_as_user("sessions", "list", "--json", cwd=shared, env=env).stdout)
        } == {theirs.state.session_id}
    finally:
        locked.chmod(0o700)


def test_cleanup_deletes_what_it_can_then_names_a_session_it_may_not_delete_with_exit_12(shared: Path) -> None:
    sessions = shared / "sessions"
    sessions.mkdir()
    store = LocalStore(sessions)
    deletable, stuck = make_session(store, workflow="deletable"), make_session(store, workflow="stuck")
    for session in (deletable, stuck):
        session.close()
    read_only = store.directory_of(stuck.state.session_id) / "scratch" / "read-only"  # a tool made it so
    read_only.mkdir(parents=True)
    (read_only / "kept.txt").write_text("x")
    _give(shared)
    read_only.chmod(0o555)  # the `shared` fixture opens it again to remove it
    env = {"STRANDS_SESSIONS_DIR": str(sessions)}
    cleaned = _as_user("sessions", "cleanup", "--older-than", "0m", "--force", cwd=shared, env=env)
    alone = _as_user("sessions", "delete", stuck.state.session_id, "--force", cwd=shared, env=env)
    assert cleaned.returncode == 12, cleaned.stdout + cleaned.stderr
    assert "✓ Deleted 1 session\n" in cleaned.stdout and "Kept" not in cleaned.stdout
    error = f"Error: cannot delete session {stuck.state.session_id}: Permission denied (EACCES)\n"
    assert cleaned.stderr == error
    assert not (sessions / f"session_{deletable.state.session_id}").exists()
    assert (alone.returncode, alone.stderr) == (12, error)  # `sessions delete` says it the same way
