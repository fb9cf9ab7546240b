"""`strands run` ends every failure as the contract says: one `Error:` line, the exit code `errors.exit_code_for`
gives (an OSError is 12, anything unexpected 70), a traceback only with --debug."""

from __future__ import annotations

import pytest

from tests.cli.in_process import strands_in_process
from tests.cli.support import CHAIN

pytestmark = pytest.mark.slow

LONG_NAME = "x" * 300  # one path component past every common file system's NAME_MAX (255)
NAMED_ARTIFACT = CHAIN + 'outputs:\n  artifacts:\n    - {path: "{{ topic }}-report.md", from: "{{ last_response }}"}\n'


def test_an_artifact_name_too_long_is_exit_12_naming_it_before_a_session_exists(strands, write_spec, tmp_path, store):
    (tmp_path / "out").mkdir()
    result = strands("run", write_spec(NAMED_ARTIFACT), "--out", tmp_path / "out", "--var", f"topic={LONG_NAME}")
    assert result.returncode == 12, result.stderr
    target = tmp_path / "out" / f"{LONG_NAME}-report.md"
    assert result.stderr == f"Error: cannot write artifact {target}: File name too long\n"
    assert store.list() == []  # the check for an existing file met it: nothing ran


def test_an_artifact_name_too_long_with_force_is_exit_12_and_leaves_the_session_failed(
    strands, write_spec, tmp_path, store
):
    (tmp_path / "out").mkdir()
    spec = write_spec(NAMED_ARTIFACT)
    result = strands("run", spec, "--out", tmp_path / "out", "--force", "--var", f"topic={LONG_NAME}")
    assert result.returncode == 12, result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"Error: cannot write artifact {tmp_path / 'out' / LONG_NAME}-report.md: File name too long"
    )
    assert "Traceback" not in result.stderr
    (summary,) = store.list()
    assert summary.display_status == "failed"  # resumable, never `running (stale)`


def _raising(exc: BaseException):
    def run_workflow(*args, **kwargs):
        raise exc

    return run_workflow


@pytest.mark.parametrize(
    ("exc", "code", "line"),
    [
        (RuntimeError("boom"), 70, "Error: RuntimeError: boom"),
        (PermissionError(13, "Permission denied"), 12, "Error: PermissionError: [Errno 13] Permission denied"),
    ],
)
def test_an_error_escaping_the_run_is_one_line_with_its_exit_code(monkeypatch, write_spec, tmp_path, exc, code, line):
    monkeypatch.setattr("strands_durable.runner.run.run_workflow", _raising(exc))  # a bug has no seam of its own
    result = strands_in_process("run", write_spec(CHAIN), cwd=tmp_path)
    assert result.returncode == code
    assert result.stderr.splitlines() == [f"{line} (run with --debug for the traceback)"]


def test_an_unexpected_error_shows_its_traceback_with_debug(monkeypatch, write_spec, tmp_path):
    monkeypatch.setattr("strands_durable.runner.run.run_workflow", _raising(RuntimeError("boom")))
    monkeypatch.setattr("strands_durable.cli.failure._debug", False)  # --debug lasts for the process: undone after
    result = strands_in_process("run", write_spec(CHAIN), "--debug", cwd=tmp_path)
    assert result.returncode == 70
    assert "Traceback" in result.stderr and result.stderr.rstrip().endswith("Error: RuntimeError: boom")
