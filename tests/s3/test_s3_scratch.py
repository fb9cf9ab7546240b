"""Files tools write in their scratch directory are part of an S3 session: a resume on another machine (another
scratch root, no spec file at the recorded path) finds them, and the finished workspace equals an uninterrupted
run's."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable.crashpoints import InjectedCrash
from strands_durable.runner.options import RunOptions
from strands_durable.runner.reporter import RecordingReporter
from strands_durable.runner.run import resume, run_workflow
from strands_durable.store.s3 import S3Store
from tests.core.support import crash_at

SPEC = """\
version: 0
name: scratch-notes
runtime: {provider: scripted}
tools:
  python: [file_write, file_read]
agents:
  scribe:
    prompt: You keep notes in files.
    tools: [file_write, file_read]
pattern:
  type: chain
  config:
    steps:
      - agent: scribe
        input: "Write the first note."
      - agent: scribe
        input: "Write the second note and read the first."
"""

SCRIPTS = {
    "scribe": [
        {"tool_calls": [{"name": "file_write", "input": {"path": "notes/one.txt", "content": "first note"}}]},
        "Wrote the first note.",
        {
            "tool_calls": [
                {"name": "file_write", "input": {"path": "notes/two.txt", "content": "second note"}},
                {"name": "file_read", "input": {"path": "notes/one.txt"}},
            ]
        },
        "Both notes are written.",
    ]
}


def _files(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in directory.rglob("*") if p.is_file()}


def _options(tmp_path: Path, **kwargs) -> RunOptions:
    return RunOptions(provider="scripted", scripts=SCRIPTS, out_dir=tmp_path / "out", **kwargs)


def test_scratch_files_follow_the_session_to_another_machine(s3_env, space, tmp_path):
    spec = tmp_path / "scratch.strands.yaml"
    spec.write_text(SPEC)
    golden_store = S3Store.from_url(space.url, scratch_root=tmp_path / "golden")
    golden = run_workflow(spec, _options(tmp_path), store=golden_store)
    golden_files = _files(golden_store.scratch_dir(golden.session_id))
    assert golden_files == {"notes/one.txt": b"first note", "notes/two.txt": b"second note"}

    machine_a = S3Store.from_url(space.url, scratch_root=tmp_path / "machine-a")
    with pytest.raises(InjectedCrash):
        run_workflow(spec, _options(tmp_path, crash_points=crash_at("step[1]:scribe/unit.before")), store=machine_a)
    (session_id,) = [s for s in machine_a.session_ids() if s != golden.session_id]
    assert _files(machine_a.scratch_dir(session_id)) == {"notes/one.txt": b"first note"}

    spec.unlink()  # machine B lacks the recorded spec path: the session's spec snapshot runs
    machine_b = S3Store.from_url(space.url, scratch_root=tmp_path / "machine-b")
    reporter = RecordingReporter()
    outcome = resume(session_id, _options(tmp_path, reporter=reporter), store=machine_b)
    assert outcome.status == "completed"
    assert ("warning", f"Spec file {spec} is gone; running the session's spec_snapshot.yaml") in reporter.calls
    assert _files(machine_b.scratch_dir(session_id)) == golden_files
    final = machine_b.load(session_id)
    results = [
        block["toolResult"]
        for conv in final.conversations.values()
        for message in conv.messages
        for block in message["content"]
        if "toolResult" in block
    ]
    assert any("first note" in str(result) for result in results)  # step 2 read what step 1 wrote elsewhere
