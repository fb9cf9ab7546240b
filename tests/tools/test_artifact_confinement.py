"""Artifacts stay strictly inside --out: a model-templated path through a symlinked directory inside --out is
refused (exit 12) before its claim is committed, and so are names that are not a file (empty, `.`, `sub/`) or hold
a control character (NUL): exit 3, one `Error:` line, no traceback, the session `failed` (resumable), never
`running (stale)`, and nothing written outside --out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from strands_durable import LocalStore
from tests.tools.support import scripted_spec


def _run(tmp_path: Path, answer: str, artifact_path: str = "{{ last_response }}") -> subprocess.CompletedProcess[str]:
    """`strands run` of a one-step spec whose scripted answer is `answer` and whose artifact path is templated
    from it (a prompt-injected model chooses the path)."""
    (tmp_path / "script.json").write_text(json.dumps({"worker": [answer]}), encoding="utf-8")
    spec = scripted_spec(tmp_path, None, f'outputs:\n  artifacts:\n    - {{path: "{artifact_path}", from: "pwned"}}\n')
    spec.write_text(
        spec.read_text().replace("provider: scripted", f"provider: scripted, model_id: {tmp_path}/script.json")
    )
    command = [sys.executable, "-m", "strands_durable", "run", str(spec), "--out", str(tmp_path / "out")]
    command += ["--sessions-dir", str(tmp_path / "sessions")]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)


def _only_session(tmp_path: Path) -> tuple[str, list[str]]:
    """The one session's status as `sessions list` shows it, and the artifact paths it claimed."""
    store = LocalStore(tmp_path / "sessions")
    (summary,) = store.list()
    return summary.display_status, sorted(store.load(summary.session_id).artifacts)


def test_an_artifact_through_a_symlinked_directory_inside_out_is_refused_before_its_claim(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "link").symlink_to(outside, target_is_directory=True)
    done = _run(tmp_path, "link/pwned.md")
    assert done.returncode == 12, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: cannot write artifact link/pwned.md: ") and "is a symbolic link" in last
    assert "Traceback" not in done.stderr
    assert list(outside.iterdir()) == []  # nothing escaped
    status, claims = _only_session(tmp_path)
    assert status == "failed" and claims == []  # refused before the claim was committed


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (".", "must name a file inside the output directory, not a directory"),
        ("./", "must name a file inside the output directory, not a directory"),
        ("sub/", "must name a file inside the output directory, not a directory"),
        ("sub/.", "must name a file inside the output directory, not a directory"),
        ("bad\x00name.md", "holds a control character"),
        ("line\nbreak.md", "holds a control character"),
    ],
)
def test_an_artifact_name_that_is_not_a_file_is_refused_with_one_error_line(tmp_path, answer, why):
    (tmp_path / "out").mkdir()
    done = _run(tmp_path, answer)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: ") and "outputs.artifacts[0].path" in last and why in last
    assert list((tmp_path / "out").iterdir()) == []  # --out is still an empty directory
    status, claims = _only_session(tmp_path)
    assert status == "failed" and claims == []  # not `running (stale)`; nothing claimed


def test_an_empty_rendered_artifact_path_is_refused(tmp_path):
    (tmp_path / "out").mkdir()
    done = _run(tmp_path, "xxx", artifact_path="{{ last_response | replace('x', ' ') }}")
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert "must stay inside the output directory" in done.stderr.strip().splitlines()[-1]
    assert _only_session(tmp_path)[0] == "failed"


def test_a_plain_artifact_in_a_new_subdirectory_is_still_written(tmp_path):
    done = _run(tmp_path, "reports/today.md")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "reports" / "today.md").read_text() == "pwned"
