"""Opening a local session removes the temp files a crash left anywhere in its directory except under backups/,
and `FileOps.remove_tree` removes a whole tree, through a subclass's own primitives when it has them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from strands_durable import LocalStore
from strands_durable.faults.classes.recording import RecordingFileOps
from strands_durable.store.fileops import FileOps

META = {
    "workflow_name": "sweep",
    "pattern": "chain",
    "spec_path": "/sweep.yaml",
    "spec_hash": "0" * 64,
    "variables": {},
    "created_at": "2026-01-01T00:00:00+00:00",
    "runtime": {"provider": "synthetic", "seed": 0},
}


def test_open_removes_temp_files_at_any_depth_but_keeps_backups(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    session = store.create(META, b"name: sweep\n")
    directory = session.directory
    session.close()
    (directory / "agents" / "a" / "deep").mkdir(parents=True)
    (directory / "backups" / "old" / "agents").mkdir(parents=True)
    left = [directory / ".session.json.1a2b.tmp", directory / "agents" / "a" / "deep" / ".m.json.3c4d.tmp"]
    kept = [directory / "backups" / ".b.json.5e6f.tmp", directory / "backups" / "old" / "agents" / ".c.tmp"]
    for path in left + kept + [directory / "agents" / "a" / "deep" / "not-temp.json"]:
        path.write_text("x")
    store.open(session.state.session_id).close()
    assert [p for p in left if p.exists()] == []
    assert all(p.exists() for p in kept)
    assert (directory / "agents" / "a" / "deep" / "not-temp.json").exists()


def _tree(root: Path) -> set[Path]:
    for sub in ("a/b/c", "a/d", "e"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    files = {root / "a" / "b" / "c" / "f1", root / "a" / "d" / "f2", root / "f3", root / "e" / ".f4.tmp"}
    for path in files:
        path.write_bytes(b"x")
    return files


def test_remove_tree_removes_everything(tmp_path: Path) -> None:
    _tree(tmp_path / "t")
    FileOps().remove_tree(tmp_path / "t")
    assert list(tmp_path.iterdir()) == []


def test_remove_tree_goes_through_a_subclass_primitives(tmp_path: Path) -> None:
    files = _tree(tmp_path / "t")
    ops = RecordingFileOps()
    ops.remove_tree(tmp_path / "t")
    assert list(tmp_path.iterdir()) == []
    removed = {op.path for op in ops.log if op.kind == "remove"}
    removed_dirs = {op.path for op in ops.log if op.kind == "rmdir"}
    assert removed == files
    assert all(isinstance(path, Path) for path in removed | removed_dirs)
    assert removed_dirs == {tmp_path / "t" / sub for sub in ("a/b/c", "a/b", "a/d", "a", "e")} | {tmp_path / "t"}


def test_the_lease_holder_file_is_replaced_atomically_without_an_fsync(tmp_path: Path) -> None:
    """Who holds the lease matters only while the holder lives (the flock is the exclusion): an open pays no
    fsync for it, and a second opener still learns the holder."""
    from strands_durable.errors import SessionInUse

    session = LocalStore(tmp_path).create(META, b"name: sweep\n")
    session_id = session.state.session_id
    session.close()
    ops = RecordingFileOps()
    held = LocalStore(tmp_path, fileops=ops).open(session_id)
    try:
        lease_json = held.directory / "lease.json"
        renamed = [op for op in ops.log if op.kind == "rename" and op.dst == lease_json]
        assert len(renamed) == 1
        temp = renamed[0].path
        assert not [op for op in ops.log if op.kind == "fsync" and op.path == temp]
        assert not [op for op in ops.log if op.kind == "fsync_dir" and op.path == held.directory]
        with pytest.raises(SessionInUse) as caught:
            LocalStore(tmp_path).open(session_id)
        assert str(os.getpid()) in str(caught.value)
    finally:
        held.close()


def test_temp_files_follow_no_link_and_name_no_directory(tmp_path: Path) -> None:
    """As `os.walk` found them: a link to a directory is not followed, a directory named like a temp file is not
    one (its temp files are), and nested directories are all read."""
    from strands_durable.store.fileops import temp_files

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".elsewhere.tmp").write_text("x")
    session = tmp_path / "s"
    (session / "agents" / "a" / "messages").mkdir(parents=True)
    (session / ".dir.tmp").mkdir()
    (session / "linked").symlink_to(outside, target_is_directory=True)
    found = [session / ".dir.tmp" / ".inner.tmp", session / "agents" / "a" / "messages" / ".m.json.1a2b.tmp"]
    for path in found:
        path.write_text("x")
    (session / "agents" / "a" / "messages" / "message_0.json").write_text("x")
    assert sorted(temp_files(session, skip="backups")) == sorted(found)
