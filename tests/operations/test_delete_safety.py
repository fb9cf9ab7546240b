"""`sessions delete` never follows a symbolic link out of a session (one a tool planted in scratch/, or a symlinked
session directory), removes the journal last, and a delete cut short at any removal is finished by the next
`delete` or `cleanup`: real files and links, the real CLI, and a file layer that fails at each removal in turn."""

from __future__ import annotations

import datetime as dt
import errno
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from strands_durable import LocalStore
from strands_durable.errors import DurableError
from strands_durable.operations import cleanup_sessions
from strands_durable.store.fileops import FileOps
from tests.tools.support import call, run_script, scripted_spec


def _session(tmp_path: Path) -> tuple[LocalStore, str]:
    """A finished session whose scratch holds a file in a subdirectory (a file tool wrote it)."""
    spec = scripted_spec(tmp_path, "[file_write]")
    outcome, store = run_script(spec, tmp_path, [call("file_write", path="notes/a.txt", content="x")])
    return store, outcome.session_id


def _user_files(tmp_path: Path) -> Path:
    """A directory of the user's, outside every session, with a file that must survive."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "precious.txt").write_text("keep me")
    return mine


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "strands_durable", "sessions", *args, "--sessions-dir", str(tmp_path / "sessions")]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_delete_removes_links_planted_in_scratch_as_links_and_never_follows_them(tmp_path):
    store, session_id = _session(tmp_path)
    mine = _user_files(tmp_path)
    scratch = store.workspace(session_id).scratch_dir
    (scratch / "to_dir").symlink_to(mine, target_is_directory=True)
    (scratch / "notes" / "to_file").symlink_to(mine / "precious.txt")
    directory = store.directory_of(session_id)
    done = _cli(tmp_path, "delete", session_id, "--force")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"✓ Deleted session {session_id}"
    assert not directory.exists() and store.session_ids() == []
    assert (mine / "precious.txt").read_text() == "keep me"  # the links' targets are untouched


def test_delete_of_a_symlinked_session_directory_removes_the_link_only(tmp_path):
    store, session_id = _session(tmp_path)
    directory = store.directory_of(session_id)
    moved = tmp_path / "mine" / directory.name
    moved.parent.mkdir()
    directory.rename(moved)
    directory.symlink_to(moved, target_is_directory=True)
    (moved / "precious.txt").write_text("keep me")
    before = sorted(p.relative_to(moved) for p in moved.rglob("*"))
    done = _cli(tmp_path, "delete", session_id, "--force")
    assert done.returncode == 0, done.stderr
    assert not directory.is_symlink() and not directory.exists()
    assert sorted(p.relative_to(moved) for p in moved.rglob("*")) == before  # the target was not emptied
    assert (moved / "precious.txt").read_text() == "keep me"


class FailingAt(FileOps):
    """The real file layer, except that its `n`-th removal, rename or directory removal (or, with `only`, of that
    operation alone) fails with EIO."""

    def __init__(self, n: int, *, only: str | None = None) -> None:
        self.n = n
        self.only = only
        self.calls = 0

    def _count(self, operation: str, path: Path) -> None:
        if self.only not in (None, operation):
            return
        self.calls += 1
        if self.calls == self.n:
            raise OSError(errno.EIO, "injected I/O error", str(path))

    def remove(self, path: Path) -> None:
        self._count("remove", path)
        super().remove(path)

    def rmdir(self, path: Path) -> None:
        self._count("rmdir", path)
        super().rmdir(path)

    def rename(self, src: Path, dst: Path) -> None:
        self._count("rename", src)
        super().rename(src, dst)


def test_a_delete_cut_short_at_each_removal_is_finished_by_the_next_delete_or_cleanup(tmp_path):
    (tmp_path / "template").mkdir()
    template_store, session_id = _session(tmp_path / "template")
    template = template_store.directory_of(session_id)
    mine = _user_files(tmp_path)
    (template_store.workspace(session_id).scratch_dir / "to_dir").symlink_to(mine, target_is_directory=True)
    n, cut_before, cut_with_journal, cut_without = 0, 0, 0, 0
    while True:
        n += 1
        root = tmp_path / f"root{n}"
        root.mkdir()
        shutil.copytree(template, root / template.name, symlinks=True)
        failing = FailingAt(n)
        try:
            LocalStore(root, fileops=failing).delete(session_id)
        except DurableError:
            pass
        else:
            assert failing.calls < n and not (root / template.name).exists()
            break
        store = LocalStore(root)
        left = root / template.name
        if left.exists():  # cut before the rename: the session is whole and listed
            cut_before += 1
            assert store.session_ids() == [session_id] and store.finish_interrupted_deletes() == []
            store.delete(session_id)
        else:  # cut after it: no command lists the session, whatever is left of it
            doomed = root / f".deleting_{template.name}"
            assert store.session_ids() == [] and doomed.is_dir()
            if (doomed / "journal.log").exists():
                cut_with_journal += 1
            else:
                cut_without += 1  # the journal went last: nothing of the session is left but the directory
                assert list(doomed.iterdir()) == []
            if n % 2:  # the next cleanup finishes it, whatever its age
                assert cleanup_sessions(store, dt.timedelta(days=3650)).finished == [session_id]
            else:  # the next delete (the CLI's first step) finishes it
                assert store.finish_interrupted_deletes() == [session_id]
        assert not left.exists() and list(root.iterdir()) == []
        assert (mine / "precious.txt").read_text() == "keep me"
    assert cut_before >= 1 and cut_with_journal >= 3 and cut_without == 1  # every kind of cut was reached


def test_the_cli_delete_and_cleanup_finish_a_delete_cut_short(tmp_path):
    store, session_id = _session(tmp_path)
    directory = store.directory_of(session_id)
    doomed = directory.with_name(f".deleting_{directory.name}")
    with pytest.raises(DurableError, match=f"cannot delete session {session_id}"):
        LocalStore(tmp_path / "sessions", fileops=FailingAt(1, only="remove")).delete(session_id)
    assert store.session_ids() == [] and (doomed / "journal.log").is_file()  # gone from every listing
    done = _cli(tmp_path, "delete", session_id[:8], "--force")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"✓ Finished an interrupted delete of session {session_id}"
    assert not doomed.exists() and list((tmp_path / "sessions").iterdir()) == []
    # the same through cleanup, which finishes it whatever the session's age
    store, session_id = _session(tmp_path)
    with pytest.raises(DurableError):
        LocalStore(tmp_path / "sessions", fileops=FailingAt(1, only="remove")).delete(session_id)
    done = _cli(tmp_path, "cleanup", "--older-than", "30d", "--force")
    assert done.returncode == 0, done.stderr
    assert f"✓ Finished an interrupted delete of session {session_id}" in done.stdout
    assert not any(p.name.startswith(".deleting_") for p in (tmp_path / "sessions").iterdir())


def test_cleanup_reports_a_failed_delete_apart_from_the_sessions_it_keeps_and_deletes_the_others(tmp_path):
    from tests.cli.support import make_session

    root = tmp_path / "sessions"
    ids = []
    for _ in range(2):
        session = make_session(LocalStore(root))
        session.close()
        ids.append(session.state.session_id)
    failing = FailingAt(1, only="remove")  # the first session's first file
    report = cleanup_sessions(LocalStore(root, fileops=failing), dt.timedelta(0))
    assert report.skipped == []  # kept on purpose (held, corrupt): none here
    ((summary, error),) = report.failed
    assert str(error) == f"cannot delete session {summary.session_id}: Input/output error (EIO)"
    assert int(error.exit_code) == 12
    assert [s.session_id for s in report.deleted] == [i for i in ids if i != summary.session_id]


class RefusingUnder(FileOps):
    """The real file layer, except that nothing under `stuck` may be removed (EACCES: a file a tool made root's)."""

    def __init__(self, stuck: Path) -> None:
        self.stuck = stuck

    def _check(self, path: Path) -> None:
        if path == self.stuck or self.stuck in path.parents:
            raise OSError(errno.EACCES, "Permission denied", str(path))

    def remove(self, path: Path) -> None:
        self._check(path)
        super().remove(path)

    def rmdir(self, path: Path) -> None:
        self._check(path)
        super().rmdir(path)

    def remove_tree(self, path: Path) -> None:
        self._check(path)
        super().remove_tree(path)


def _refusing(original, check):
    def method(self, path: Path) -> None:
        check(path)
        original(self, path)

    return method


def _cut_short(root: Path, count: int) -> list[str]:
    """`count` sessions whose deletes were cut short after the rename (gone from every listing)."""
    from tests.cli.support import make_session

    ids = []
    for _ in range(count):
        session = make_session(LocalStore(root))
        session.close()
        with pytest.raises(DurableError):
            LocalStore(root, fileops=FailingAt(1, only="remove")).delete(session.state.session_id)
        ids.append(session.state.session_id)
    return sorted(ids)


def _doomed(root: Path, session_id: str) -> Path:
    return root / f".deleting_session_{session_id}"


def test_a_delete_cut_short_that_cannot_be_finished_blocks_no_other(tmp_path):
    from tests.cli.support import make_session

    root = tmp_path / "sessions"
    stuck, other = _cut_short(root, 2)
    refusing = LocalStore(root, fileops=RefusingUnder(_doomed(root, stuck)))
    with pytest.raises(DurableError, match=f"cannot delete session {stuck}: Permission denied"):
        refusing.finish_interrupted_deletes()  # asked without a list to fill: the first failure is raised
    failed: list = []
    assert refusing.finish_interrupted_deletes(failed) == [other] and not _doomed(root, other).exists()
    assert [(i, str(e)) for i, e in failed] == [(stuck, f"cannot delete session {stuck}: Permission denied (EACCES)")]
    old = make_session(LocalStore(root))
    old.close()
    report = cleanup_sessions(refusing, dt.timedelta(0))
    assert [s.session_id for s in report.deleted] == [old.state.session_id]
    assert [i for i, _ in report.unfinished] == [stuck] and report.failed == []
    assert _doomed(root, stuck).is_dir()


def test_the_cli_goes_on_past_a_delete_cut_short_it_cannot_finish_and_names_it(tmp_path, monkeypatch):
    from tests.cli.in_process import strands_in_process
    from tests.cli.support import make_session

    root = tmp_path / "sessions"
    (stuck,) = _cut_short(root, 1)
    check = RefusingUnder(_doomed(root, stuck))._check
    for name in ("remove", "rmdir", "remove_tree"):  # every store the CLI opens gets the refusing layer
        monkeypatch.setattr(FileOps, name, _refusing(getattr(FileOps, name), check))
    ids = []
    for _ in range(2):
        session = make_session(LocalStore(root))
        session.close()
        ids.append(session.state.session_id)
    error = f"Error: cannot delete session {stuck}: Permission denied (EACCES)"
    warning = f"⚠ Warning: an interrupted delete could not be finished: cannot delete session {stuck}: Permission "

    def sessions(*args: str):
        return strands_in_process("sessions", *args, "--sessions-dir", root, cwd=tmp_path)

    deleted = sessions("delete", ids[0], "--force")
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stderr.startswith(warning) and deleted.stdout.strip() == f"✓ Deleted session {ids[0]}"
    asked = sessions("delete", stuck[:8], "--force")  # the stuck one itself: its own error
    assert (asked.returncode, asked.stderr.strip()) == (12, error)
    cleaned = sessions("cleanup", "--older-than", "0m", "--force")
    assert cleaned.returncode == 12 and cleaned.stderr.strip() == error, cleaned.stderr
    assert "✓ Deleted 1 session" in cleaned.stdout
    assert LocalStore(root).session_ids() == [] and _doomed(root, stuck).is_dir()
