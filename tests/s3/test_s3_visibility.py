"""What `sessions list` and `delete` see at the edges: a create that died before its first view, and a writer
paused before its PUT while its session is deleted (it must not bring the session back)."""

from __future__ import annotations

import pytest

from strands_durable.errors import SessionFenced, SessionNotFound, StorageIOError, UsageError
from strands_durable.store.journal import read_journal
from strands_durable.testing.s3_faults import SERVER_ERROR, CountingClient, FaultingClient
from tests.s3.support import as_a_fresh_process, client_for, meta, pause_a_writer, store_for, unit


def _keys(client, space, under: str = "") -> list[str]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=space.bucket, Prefix=f"{space.prefix}/{under}")
    return [item["Key"] for page in pages for item in page.get("Contents", ())]


def test_a_create_that_dies_after_its_header_commit_is_still_listed(server, server_space):
    """The view written after the header commit fails for good (as a process killed between the two PUTs): the
    pending view written before the header keeps the session listed, read from its commits (two requests more)."""
    faulting = FaultingClient(client_for(server))
    views = f"{server_space.prefix}/views/"

    def real_view(kwargs) -> bool:
        return kwargs["Key"].startswith(views) and b'"pending"' not in kwargs["Body"]

    faulting.plan("put_object", SERVER_ERROR, times=10, when=real_view)
    with pytest.raises(StorageIOError):
        store_for(server, server_space, client=faulting).create(meta(), b"spec")
    assert faulting.injected
    (commit,) = [key for key in _keys(client_for(server), server_space, "sessions/") if "/commits/" in key]
    sid = commit.split("/sessions/")[1].split("/")[0]

    counting = CountingClient(client_for(server))
    as_a_fresh_process()  # as another process lists it: commit 0 is fetched, not remembered
    (summary,) = store_for(server, server_space, client=counting).list()
    assert (summary.session_id, summary.workflow_name, summary.display_status) == (sid, "s3-test", "running (stale)")
    # LIST views, LIST leases, GET the view; the pending view is confirmed by LIST of the session and GET commit 0
    assert (counting.counts["list_objects_v2"], counting.counts["get_object"]) == (3, 2)

    resumed = store_for(server, server_space).open(sid)  # resumable, and its open writes the real view
    counting.reset()
    (summary,) = store_for(server, server_space, client=counting).list()
    resumed.close()
    assert summary.display_status == "running" and counting.total == 3


def test_a_pending_view_without_a_header_is_not_listed(server, server_space):
    """A create that died after its pending view and before its header commit created nothing."""
    faulting = FaultingClient(client_for(server))
    faulting.plan("put_object", SERVER_ERROR, times=10, when=lambda kw: "/commits/" in kw["Key"])
    with pytest.raises(StorageIOError):
        store_for(server, server_space, client=faulting).create(meta(), b"spec")
    assert any("/views/" in key for key in _keys(client_for(server), server_space))
    assert store_for(server, server_space).list() == []


def test_a_writer_paused_before_its_put_while_the_session_is_deleted_leaves_nothing(server, server_space, tmp_path):
    """The writer passes its lease check and pauses before saving its scratch files and its PUT; its lease
    expires, another process deletes the session. Its PUT aims at the delete's fence, which stays: refused, it
    stops with exit 17, and removes the scratch files it saved. Nothing of the session is listed or readable, and
    its id is not reused. (Fails when delete removes the fences: the PUT lands on the freed key.)"""
    opts = {"lease_ttl_s": 0.6, "lease_skew_s": 0.1}
    paused_store = store_for(server, server_space, **opts)

    def a_tool_writes_a_file(session) -> None:
        scratch = paused_store.scratch_dir(session.state.session_id)
        scratch.mkdir(parents=True, exist_ok=True)
        (scratch / "notes.txt").write_text("written by the paused writer\n")

    paused = pause_a_writer(paused_store, prepare=a_tool_writes_a_file)
    sid = paused.session.state.session_id
    deleter = store_for(server, server_space, **opts)
    deleter.delete(sid)
    refused = paused.finish()
    assert isinstance(refused, SessionFenced), paused.outcome
    assert "the session was deleted" in str(refused)

    client = client_for(server)
    left = [key for key in _keys(client, server_space) if sid in key]
    assert len(left) == 1 and "/commits/" in left[0], left  # the delete's fence, nothing the writer wrote
    held = client.get_object(Bucket=server_space.bucket, Key=left[0])["Body"].read()
    (record,) = read_journal(left[0], held, first_seq=2).records
    assert record["fence"]["deleted"] is True and record["seq"] == 2
    assert deleter.list() == []
    with pytest.raises(SessionNotFound):
        deleter.load(sid)
    with pytest.raises(SessionNotFound):
        deleter.delete(sid)
    with pytest.raises(UsageError, match="belonged to a deleted session"):
        deleter.create(meta(sid), b"spec", session_id=sid)


def test_deleting_a_deleted_session_again_removes_a_view_a_paused_writer_wrote_after_it(server, server_space):
    """A writer paused between a landed commit and its view PUT can still write the view after a delete: the
    session then shows in `list`, and deleting it again removes the view (the fences stay)."""
    store = store_for(server, server_space)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    session.commit([unit(0)])
    session.close()
    late_view = client_for(server).get_object(Bucket=server_space.bucket, Key=store.keys.view(sid))["Body"].read()
    store.delete(sid)
    client_for(server).put_object(Bucket=server_space.bucket, Key=store.keys.view(sid), Body=late_view)  # the late PUT
    assert [s.session_id for s in store.list()] == [sid]
    store.delete(sid)
    assert store.list() == []
    assert all("/commits/" in key for key in _keys(client_for(server), server_space) if sid in key)
