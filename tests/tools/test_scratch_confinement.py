"""A file tool never replaces the session's scratch directory: `file_write(".")` and every path that names the
scratch directory itself are the tool's error, later tools of the session still work, and `sessions check`
reports a scratch that is not a directory (a file in its place, or a symbolic link)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.tools.support import call, result_text, run_script, scripted_spec, tool_results


@pytest.mark.parametrize("path", [".", "./", "/", "", "sub/..", "sub/../."])
def test_file_write_refuses_the_scratch_directory_itself_and_later_tools_still_work(tmp_path, path):
    spec = scripted_spec(tmp_path, "[file_write, file_read]")
    turns = [call("file_write", path=path, content="boom"), call("file_write", path="kept.txt", content="fine")]
    turns.append(call("file_read", path="kept.txt"))
    outcome, store = run_script(spec, tmp_path, turns)
    refused, written, read = tool_results(store, outcome.session_id)
    assert refused["status"] == "error"
    assert "is the scratch directory itself; name a file inside it" in result_text(refused)
    assert written["status"] == "success" and result_text(read) == "fine"
    scratch = store.workspace(outcome.session_id).scratch_dir
    assert scratch.is_dir() and sorted(p.name for p in scratch.iterdir()) == ["kept.txt"]


def _check(tmp_path, session_id: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "strands_durable", "sessions", "check", session_id]
    command += ["--sessions-dir", str(tmp_path / "sessions")]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_sessions_check_reports_a_scratch_that_is_not_a_directory(tmp_path):
    spec = scripted_spec(tmp_path, "[file_write]")
    outcome, store = run_script(spec, tmp_path, [call("file_write", path="a.txt", content="x")])
    assert _check(tmp_path, outcome.session_id).returncode == 0
    scratch = store.workspace(outcome.session_id).scratch_dir
    (scratch / "a.txt").unlink()
    scratch.rmdir()
    scratch.write_text("a file where the directory was")  # what file_write(".") left before
    done = _check(tmp_path, outcome.session_id)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "scratch" in done.stdout and "is not a directory" in done.stdout
    scratch.unlink()
    scratch.symlink_to(tmp_path, target_is_directory=True)
    done = _check(tmp_path, outcome.session_id)
    assert done.returncode == 1 and "is a symbolic link" in done.stdout
