"""Files tools write in their scratch directory are part of an S3 session: a resume on another machine (another
scratch root, no spec file at the recorded path) finds them, and the finished workspace equals an uninterrupted
run's."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable import InjectedCrash, RunOptions, S3Store, resume, run_workflow
from strands_durable.runner.reporter import RecordingReporter
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


def test_a_writer_fenced_out_cannot_overwrite_the_scratch_files_of_the_holder_that_took_over(
    server, server_space, tmp_path
):
    """A holder saved two files, changed them locally, and was paused past its lease before its next commit
    (between its lease check and its scratch save). Another machine takes over, changes one file and commits.
    The paused writer then wakes, saves its stale files and is refused (fenced): its PUTs went to keys of its own
    lease that no committed manifest names, so a third machine still restores exactly the taker's files, and the
    stale keys are gone. (Fails when scratch keys are shared between holders, as `scratch/<path>` was.)"""
    from strands_durable.errors import SessionFenced
    from tests.s3.support import pause_a_writer, store_for, unit

    opts = {"lease_ttl_s": 0.6, "lease_skew_s": 0.1}
    machine_a = store_for(server, server_space, scratch_root=tmp_path / "a", **opts)

    def saved_then_changed(session) -> None:
        scratch = machine_a.scratch_dir(session.state.session_id)
        scratch.mkdir(parents=True, exist_ok=True)
        (scratch / "keep.txt").write_text("kept from A")
        (scratch / "notes.txt").write_text("first note by A")
        session.commit([unit(50)])  # saved with this commit
        (scratch / "keep.txt").write_text("stale A")
        (scratch / "notes.txt").write_text("stale A")
        (scratch / "extra.txt").write_text("stale A")

    paused = pause_a_writer(machine_a, prepare=saved_then_changed)
    sid = paused.session.state.session_id
    machine_b = store_for(server, server_space, scratch_root=tmp_path / "b", **opts)
    taker = machine_b.open(sid)
    scratch_b = machine_b.scratch_dir(sid)
    assert _files(scratch_b) == {"keep.txt": b"kept from A", "notes.txt": b"first note by A"}
    (scratch_b / "notes.txt").write_text("second note by B")
    taker.commit([unit(100)])

    refused = paused.finish()  # it saves its stale files, then its commit meets the fence
    assert isinstance(refused, SessionFenced), paused.outcome
    taker.close()

    machine_c = store_for(server, server_space, scratch_root=tmp_path / "c")
    machine_c.open(sid).close()
    assert _files(machine_c.scratch_dir(sid)) == {"keep.txt": b"kept from A", "notes.txt": b"second note by B"}
    stored = [item.key for item in machine_c.objects.list(machine_c.keys.scratch(sid))]
    token_a = paused.session.lease_token
    assert sorted(key.rsplit("/", 3)[1:] for key in stored) == sorted(
        [[token_a, "1", "keep.txt"], [taker.lease_token, "1", "notes.txt"]]
    ), stored  # A's first save (still named by the manifest) and B's; A's stale save was removed


def test_scratch_files_saved_before_manifests_existed_are_restored_then_stored_anew(s3_server, space, tmp_path):
    """Sessions saved by the earlier release kept their files at `sessions/<id>/scratch/<path>`: they are
    restored from there, the next save stores every file under the manifest, and the old keys are deleted."""

    from strands_durable.store.journal import decode_line, encode_line
    from tests.s3.support import meta, store_for, unit

    store = store_for(s3_server, space, scratch_root=tmp_path / "a")
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    session.close()
    header = decode_line(store.objects.get(store.keys.commit(sid, 0))[0]).record
    del header["scratch"]  # the header as the earlier release wrote it: no manifest
    store.objects.put(store.keys.commit(sid, 0), encode_line(header).data)
    legacy = store.keys.session(sid) + "scratch/"
    store.objects.put(legacy + "notes/one.txt", b"first note")
    store.objects.put(legacy + "two.txt", b"second note")
    other = store_for(s3_server, space, scratch_root=tmp_path / "b")
    reopened = other.open(sid)
    scratch = other.scratch_dir(sid)
    assert _files(scratch) == {"notes/one.txt": b"first note", "two.txt": b"second note"}
    (scratch / "two.txt").unlink()
    reopened.commit([unit(1)])
    reopened.close()
    assert list(store.objects.list(legacy)) == []
    third = store_for(s3_server, space, scratch_root=tmp_path / "c")
    third.open(sid).close()
    assert _files(third.scratch_dir(sid)) == {"notes/one.txt": b"first note"}
