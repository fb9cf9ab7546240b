"""A failing disk (issue 20): every store write path fails with exit 12 naming the session and the cause; read
paths never write; ENOSPC at every write of a short run, healed and resumed, ends in a session that passes
`sessions check`; a failed creation leaves nothing; `sessions list` shows what the journal holds."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

from strands_durable import LocalStore, RunOptions, resume, run_workflow
from strands_durable.errors import DurableError, ExitCode, StorageIOError
from strands_durable.faults.classes.disk import FaultyFileOps
from strands_durable.operations import check_session, export_session, repair_session
from strands_durable.store.fileops import AppendHandle, FileOps
from strands_durable.store.journal import JOURNAL_NAME
from tests.cli.support import make_session, strands_command

ENOSPC_TEXT = "No space left on device (ENOSPC)"

SHORT_SPEC = """\
version: 0
name: short
runtime:
  provider: synthetic
agents:
  analyst:
    prompt: You check numbers with the calculator.
    tools: [calculator]
  writer:
    prompt: You write one line.
pattern:
  type: chain
  config:
    steps:
      - agent: analyst
        input: "Estimate 12 * 7 with the calculator."
      - agent: writer
        input: "Summarise: {{ steps[0].response }}"
outputs:
  artifacts:
    - path: "out.md"
      from: "{{ last_response }}\\n"
"""


class FailingOps(FileOps):
    """Real operations, except that the named primitives raise `OSError(code)` (a disk refusing one kind of write)."""

    def __init__(self, code: int, *failing: str) -> None:
        self.code = code
        self.failing = set(failing)

    def _check(self, kind: str, path: Any) -> None:
        if kind in self.failing:
            raise OSError(self.code, os.strerror(self.code), str(path))

    def write_file(self, path: Path, data: bytes, *, sync: bool) -> None:
        self._check("write_file", path)
        super().write_file(path, data, sync=sync)

    def rename(self, src: Path, dst: Path) -> None:
        self._check("rename", dst)
        super().rename(src, dst)

    def remove(self, path: Path) -> None:
        self._check("remove", path)
        super().remove(path)

    def rmdir(self, path: Path) -> None:
        self._check("rmdir", path)
        super().rmdir(path)

    def mkdir(self, path: Path) -> None:
        self._check("mkdir", path)
        super().mkdir(path)

    def fsync_dir(self, path: Path) -> None:
        self._check("fsync_dir", path)
        super().fsync_dir(path)

    def truncate(self, path: Path, size: int) -> None:
        self._check("truncate", path)
        super().truncate(path, size)

    def sync_all(self) -> None:
        self._check("sync_all", None)
        super().sync_all()

    def open_append(self, path: Path) -> AppendHandle:
        self._check("open_append", path)
        return super().open_append(path)


READ_ONLY = ("write_file", "rename", "remove", "rmdir", "mkdir", "fsync_dir", "truncate", "sync_all", "open_append")


def _paused_session(root: Path, session_id: str = "paused-one") -> None:
    session = make_session(LocalStore(root), session_id=session_id)
    message = {"role": "user", "content": [{"text": "hello"}]}
    session.commit(
        [{"type": "message", "conv": "writer", "agent": "writer", "unit": "step[0]", "index": 0, "message": message}]
    )
    session.commit([{"type": "status", "status": "paused", "reason": "interrupted"}])
    session.close()


def _expect_io_error(raised: pytest.ExceptionInfo[BaseException], *parts: str) -> None:
    assert isinstance(raised.value, StorageIOError), repr(raised.value)
    assert raised.value.exit_code == ExitCode.IO
    for part in parts:
        assert part in str(raised.value), str(raised.value)


# -- each write path names the session and the cause --------------------------------------------------------------


def test_a_lease_that_cannot_be_written_fails_with_exit_12_naming_the_session(tmp_path: Path) -> None:
    _paused_session(tmp_path)
    store = LocalStore(tmp_path, fileops=FailingOps(errno.EROFS, *READ_ONLY))
    with pytest.raises(DurableError) as raised:
        store.open("paused-one")
    _expect_io_error(raised, "cannot take the lease of session paused-one", "Read-only file system (EROFS)")


def test_a_creation_on_a_full_disk_fails_naming_the_session_and_leaves_nothing(tmp_path: Path) -> None:
    for fail_at in range(1, 12):
        root = tmp_path / f"n{fail_at}"
        ops = FaultyFileOps(fail_at, errno.ENOSPC)
        store = LocalStore(root, fileops=ops)
        try:
            make_session(store, session_id="new-one").close()
        except DurableError as exc:
            assert exc.exit_code == ExitCode.IO and ENOSPC_TEXT in str(exc), str(exc)
            assert "session new-one" in str(exc), str(exc)
        ops.heal()
        plain = LocalStore(root)
        leftovers = sorted(p.name for p in root.iterdir()) if root.exists() else []
        if plain.session_ids():  # the journal was written: a session every command sees and can delete
            assert plain.session_ids() == ["new-one"] and [s.session_id for s in plain.list()] == ["new-one"]
            plain.delete("new-one")
        else:
            assert leftovers == [], f"a failed creation at op {fail_at} left {leftovers}"
        assert not root.exists() or list(root.iterdir()) == []


def test_a_commit_on_a_full_disk_names_the_session(tmp_path: Path) -> None:
    session = make_session(LocalStore(tmp_path), session_id="full-one")
    session._appender.close()  # type: ignore[attr-defined]
    session._appender = _RefusingAppender()  # type: ignore[attr-defined]
    with pytest.raises(DurableError) as raised:
        session.commit([{"type": "status", "status": "paused"}])
    _expect_io_error(raised, "cannot commit to session full-one", ENOSPC_TEXT)
    session.abandon()


class _RefusingAppender:
    def append(self, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def sync(self) -> None: ...

    def close(self) -> None: ...


def test_readable_files_that_cannot_be_written_name_the_session(tmp_path: Path) -> None:
    ops = FailingOps(errno.EACCES)
    session = make_session(LocalStore(tmp_path, fileops=ops), session_id="views-one")
    ops.failing.add("write_file")
    with pytest.raises(DurableError) as raised:
        session.commit([{"type": "status", "status": "paused"}])
    _expect_io_error(raised, "cannot write the readable files of session views-one", "Permission denied (EACCES)")
    session.abandon()


class _NoBootId(FailingOps):
    def boot_id(self) -> None:
        return None  # a system without one: close flushes every readable file before its mark


def test_a_close_whose_sync_fails_names_the_session(tmp_path: Path) -> None:
    ops = _NoBootId(errno.EIO)
    session = make_session(LocalStore(tmp_path, fileops=ops), session_id="close-one")
    ops.failing.add("sync_all")
    with pytest.raises(DurableError) as raised:
        session.close()
    _expect_io_error(raised, "cannot close session close-one", "Input/output error (EIO)")
    assert LocalStore(tmp_path).holder("close-one") is None  # the lease is released all the same


def test_a_delete_that_cannot_remove_names_the_session_not_a_file(tmp_path: Path) -> None:
    _paused_session(tmp_path, "delete-one")
    with pytest.raises(DurableError) as raised:
        LocalStore(tmp_path, fileops=FailingOps(errno.EROFS, "remove")).delete("delete-one")
    _expect_io_error(raised, "cannot delete session delete-one", "Read-only file system (EROFS)")
    LocalStore(tmp_path).delete("delete-one")  # the next delete finishes the one cut short
    assert not any(tmp_path.iterdir())
    _paused_session(tmp_path, "delete-two")
    with pytest.raises(DurableError) as raised:  # on a read-only disk the lease is refused first
        LocalStore(tmp_path, fileops=FailingOps(errno.EROFS, *READ_ONLY)).delete("delete-two")
    _expect_io_error(raised, "cannot take the lease of session delete-two", "(EROFS)")
    assert ".tmp" not in str(raised.value)


def test_a_torn_tail_that_cannot_be_cut_names_the_session(tmp_path: Path) -> None:
    _paused_session(tmp_path, "torn-one")
    with open(LocalStore(tmp_path).directory_of("torn-one") / JOURNAL_NAME, "ab") as fh:
        fh.write(b"0000 {half")
    with pytest.raises(DurableError) as raised:
        LocalStore(tmp_path, fileops=FailingOps(errno.ENOSPC, "truncate")).open("torn-one")
    _expect_io_error(raised, "cannot cut the torn tail of the journal of session torn-one", ENOSPC_TEXT)


def test_a_repair_whose_backup_fails_names_the_session(tmp_path: Path) -> None:
    store = LocalStore(tmp_path, strict=False)
    session = make_session(store, session_id="repair-one")
    use = {"toolUse": {"toolUseId": "t1", "name": "calculator", "input": {}}}
    for index, message in enumerate(
        [
            {"role": "user", "content": [{"text": "go"}]},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [{"text": "a prompt where the results belong"}]},
        ]
    ):
        session.commit(
            [{"type": "message", "conv": "writer", "agent": "writer", "unit": "u", "index": index, "message": message}]
        )
    session.close()
    with pytest.raises(DurableError) as raised:
        repair_session(LocalStore(tmp_path, fileops=FailingOps(errno.ENOSPC, "rename"), strict=False), "repair-one")
    _expect_io_error(raised, "session repair-one", ENOSPC_TEXT)


def test_show_export_and_check_work_on_a_read_only_sessions_directory(tmp_path: Path) -> None:
    _paused_session(tmp_path, "read-one")
    store = LocalStore(tmp_path, fileops=FailingOps(errno.EROFS, *READ_ONLY))
    assert store.resolve("read-one") == "read-one"
    assert store.load("read-one").status == "paused" and store.holder("read-one") is None
    assert [s.session_id for s in store.list()] == ["read-one"]
    assert export_session(store, "read-one")["session"]["status"] == "paused"
    assert [p for p in check_session(store, "read-one") if p.severity == "error"] == []


def test_resume_with_an_unwritable_lease_exits_12_with_one_line(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    _paused_session(sessions, "cli-one")
    lease = LocalStore(sessions).directory_of("cli-one") / "lease.json"
    lease.unlink()
    lease.mkdir()  # a lease file that cannot be replaced: the rename fails as on a broken disk
    (lease / "x").write_text("")
    result = strands_command("run", "--resume", "cli-one", "--sessions-dir", sessions, cwd=tmp_path)
    assert result.returncode == 12, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: cannot take the lease of session cli-one:"), result.stderr
    assert "Traceback" not in result.stderr


# -- ENOSPC at every write of a short run, healed, resumed and checked ------------------------------------------------


def test_enospc_at_every_write_then_resume_leaves_a_session_that_passes_check(tmp_path: Path) -> None:
    spec = tmp_path / "short.strands.yaml"
    spec.write_text(SHORT_SPEC)
    fail_at, outcomes = 1, {"created": 0, "not created": 0, "completed despite": 0}
    while True:
        work = tmp_path / f"op{fail_at}"
        sessions, out = work / "sessions", work / "out"
        ops = FaultyFileOps(fail_at, errno.ENOSPC)
        options = RunOptions(provider="synthetic", out_dir=out)
        try:
            run_workflow(spec, options, store=LocalStore(sessions, fileops=ops), session_id="short-run")
        except DurableError as exc:
            assert exc.exit_code == ExitCode.IO and "No space left on device" in str(exc), (fail_at, str(exc))
        if ops.fired is None:
            break  # the run completed without reaching operation `fail_at`
        ops.heal()
        store = LocalStore(sessions)
        if "short-run" not in store.session_ids():
            outcomes["not created"] += 1
            assert not sessions.exists() or list(sessions.iterdir()) == [], f"op {fail_at}: creation left files"
        else:
            outcomes["created"] += 1
            listed = {s.session_id: s.status for s in store.list()}
            assert listed["short-run"] == store.load("short-run").status, f"op {fail_at}: list disagrees"
            if store.load("short-run").status != "completed":
                resume("short-run", RunOptions(provider="synthetic", out_dir=out), store=store)
            else:
                outcomes["completed despite"] += 1
            problems = check_session(store, "short-run")
            errors = [str(p) for p in problems if p.severity == "error"]
            assert errors == [], f"ENOSPC at op {fail_at} ({ops.fired}), then resume: {errors}"
            assert store.load("short-run").status == "completed"
        fail_at += 1
    assert fail_at > 30 and outcomes["created"] > 20, (fail_at, outcomes)


# -- `sessions list` shows what the journal holds ------------------------------------------------------------------


def test_list_shows_the_journal_when_session_json_is_ahead_of_it(tmp_path: Path) -> None:
    session = make_session(LocalStore(tmp_path), session_id="ahead-one")
    session.commit([{"type": "status", "status": "failed", "reason": "disk full"}])
    session.close()
    directory = LocalStore(tmp_path).directory_of("ahead-one")
    view = json.loads((directory / "session.json").read_text())
    view.update(status="completed", journal_seq=view["journal_seq"] + 5)
    (directory / "session.json").write_text(json.dumps(view))
    [summary] = LocalStore(tmp_path).list()
    assert (summary.status, summary.reason) == ("failed", "disk full")


def test_list_shows_the_journal_after_its_tail_was_cut(tmp_path: Path) -> None:
    session = make_session(LocalStore(tmp_path), session_id="cut-one")
    session.commit([{"type": "status", "status": "completed"}])
    session.close()
    journal = LocalStore(tmp_path).directory_of("cut-one") / JOURNAL_NAME
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:1]))  # only the header survives: the session never got further
    [summary] = LocalStore(tmp_path).list()
    assert summary.status == "running" and summary.stale


def test_list_reads_session_json_when_the_journal_confirms_it(tmp_path: Path) -> None:
    session = make_session(LocalStore(tmp_path), session_id="fine-one")
    session.commit([{"type": "status", "status": "paused", "reason": "interrupted"}])
    session.close()
    directory = LocalStore(tmp_path).directory_of("fine-one")
    view = json.loads((directory / "session.json").read_text())
    view["workflow_name"] = "from-the-view"  # the cheap path reads the view (nothing the journal disputes)
    (directory / "session.json").write_text(json.dumps(view))
    [summary] = LocalStore(tmp_path).list()
    assert summary.workflow_name == "from-the-view" and summary.status == "paused"


def test_the_ends_of_a_long_journal_are_read_from_its_two_ends(tmp_path: Path) -> None:
    from strands_durable.store.journal import journal_ends

    session = make_session(LocalStore(tmp_path, strict=False), session_id="long-one")
    for index in range(300):  # ~100 KiB: more than one window
        role = "user" if index % 2 == 0 else "assistant"
        text = f"{index:04d}" + "x" * 300
        message = {"role": role, "content": [{"text": text}]}
        event = {
            "type": "message",
            "conv": "writer",
            "agent": "writer",
            "unit": "u",
            "index": index,
            "message": message,
        }
        session.commit([event], durable=False)
    seq = session.state.seq
    session.close()
    journal = LocalStore(tmp_path).directory_of("long-one") / JOURNAL_NAME
    assert journal.stat().st_size > 65536
    ends = journal_ends(journal, window=4096)
    assert ends.ours and ends.last is not None and ends.last["seq"] == seq + 1 and ends.last.get("views_boot")
    with open(journal, "ab") as fh:
        fh.write(b"0badc0de not a record\n")  # a bad final line: only a whole read can judge it
    assert journal_ends(journal, window=4096).last is None
    huge_header = tmp_path / "other.log"
    huge_header.write_bytes(journal.read_bytes().split(b"\n", 1)[0] + b"\n")
    assert journal_ends(huge_header, window=16).ours  # a header longer than the window is read in full
    huge_header.write_bytes(b"x" * 100 + b"\n")
    assert not journal_ends(huge_header, window=16).ours
