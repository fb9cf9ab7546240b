"""S3Store against a real SeaweedFS: commits, checkpoints, leases, fencing, request bounds."""

from __future__ import annotations

import hashlib
import math
import time

import pytest

from strands_durable.errors import CorruptSession, ExitCode, SessionFenced, SessionInUse, SessionNotFound
from strands_durable.store.journal import encode_line
from strands_durable.testing.s3_faults import CountingClient
from tests.s3.support import Space, client_for, meta, pause_a_writer, store_for, unit


def _keys(client, space, under: str = "") -> list[str]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=space.bucket, Prefix=f"{space.prefix}/{under}")
    return [item["Key"] for page in pages for item in page.get("Contents", ())]


def test_commits_reopen_to_the_same_fold_across_checkpoints(server, server_any_space):
    space = server_any_space
    store = store_for(server, space, checkpoint_every=4)
    session = store.create(meta(), b"name: spec\n")
    sid = session.state.session_id
    for index in range(10):
        session.commit([unit(index)])
    session.commit([{"type": "status", "status": "paused", "reason": "interrupted"}])
    units, seq = dict(session.state.units), session.state.seq
    session.close()
    loaded = store_for(server, space).load(sid)
    assert loaded.units == units and len(loaded.units) == 10
    assert (loaded.status, loaded.reason, loaded.seq) == ("paused", "interrupted", seq + 1)  # + the close mark
    assert loaded.synced_seq == loaded.seq
    assert store.spec_snapshot(sid) == b"name: spec\n"
    keys = _keys(client_for(server), space, f"sessions/{sid}/")
    checkpoints = [k for k in keys if "/checkpoints/" in k]
    commits = [k for k in keys if "/commits/" in k]
    assert len(checkpoints) == 1, keys  # older checkpoints are deleted once a newer one exists
    covered = int(checkpoints[0].rsplit("/", 1)[1])
    assert all(int(k.rsplit("/", 1)[1]) > covered for k in commits), "a covered commit object was kept"


def test_opening_a_long_session_costs_a_bounded_number_of_requests(server, server_space):
    every = 8
    store = store_for(server, server_space, checkpoint_every=every)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    for index in range(40):
        session.commit([unit(index)])
    session.close()
    counting = CountingClient(client_for(server))
    reader = store_for(server, server_space, client=counting, checkpoint_every=every)
    state = reader.load(sid)
    assert len(state.units) == 40
    # one LIST page + the checkpoint + at most `every` commits after it
    assert counting.counts["list_objects_v2"] == 1
    assert counting.counts["get_object"] <= 1 + every
    assert counting.total <= 1 + 1 + every


def test_a_second_open_is_refused_naming_the_holder(server, server_space):
    store = store_for(server, server_space)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    with pytest.raises(SessionInUse) as refused:
        store_for(server, server_space).open(sid)
    assert refused.value.exit_code == ExitCode.SESSION_UNUSABLE
    assert f"Session {sid} is in use by pid" in str(refused.value)
    session.close()
    store_for(server, server_space).open(sid).close()  # released on close


def test_a_writer_whose_lease_was_taken_over_is_fenced_out(server, server_space):
    store = store_for(server, server_space, lease_ttl_s=0.6, lease_skew_s=0.1)
    holder = store.create(meta(), b"spec")
    sid = holder.state.session_id
    holder.commit([unit(0)])
    holder._lease.stop_renewing()  # a holder that stopped (paused, partitioned) without knowing it
    time.sleep(0.8)
    taker = store_for(server, server_space, lease_ttl_s=0.6, lease_skew_s=0.1).open(sid)
    fence_seq = taker.state.seq
    with pytest.raises(SessionFenced) as fenced:
        holder.commit([unit(1)])
    assert fenced.value.exit_code == ExitCode.SESSION_UNUSABLE
    taker.commit([unit(2)])
    taker.close()
    state = store.load(sid)
    assert "step[1]" not in state.units and "step[2]" in state.units
    assert fence_seq == 2  # header, step[0], then the fence


def test_a_writer_paused_across_a_compaction_cannot_reuse_a_deleted_key(server, server_any_space):
    """The writer passes its lease check, then pauses before its PUT; meanwhile its lease expires, the taker
    fences, commits and compacts (deleting the commit objects around the fence). The paused writer's next key is
    the fence's, which compaction keeps: its PUT fails, it reads the fence and stops. (Fails when compaction
    deletes fences: the If-None-Match PUT then succeeds on the deleted key, on a versioned bucket too.)"""
    space = server_any_space
    opts = {"lease_ttl_s": 0.6, "lease_skew_s": 0.1, "checkpoint_every": 4}
    paused = pause_a_writer(store_for(server, space, **opts))
    sid = paused.session.state.session_id
    taker = store_for(server, space, **opts).open(sid)
    taker_fence = taker.state.seq
    fence_key = f"{space.prefix}/sessions/{sid}/commits/{taker_fence:012d}"
    for index in range(1, 12):
        taker.commit([unit(100 + index)])
    refused = paused.finish()
    assert isinstance(refused, SessionFenced), paused.outcome
    assert f"commit {taker_fence} is a fence written by pid" in str(refused)  # found in the checkpoint's fences
    keys = _keys(client_for(server), space, f"sessions/{sid}/")
    assert fence_key in keys, "compaction deleted the fence"
    assert f"{space.prefix}/sessions/{sid}/commits/000000000001" not in keys  # covered commits were deleted
    taker.close()
    state = store_for(server, space).load(sid)
    assert "step[1]" not in state.units
    assert sorted(k for k in state.units if k.startswith("step[1")) == [f"step[{100 + i}]" for i in range(1, 12)]


def test_a_lost_race_without_a_fence_is_folded_and_the_commit_goes_to_the_next_key(server, server_space):
    store = store_for(server, server_space)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    other = {"seq": 1, "at": "2026-01-01T00:00:00+00:00", "events": [unit(7)], "writer": "another-writer"}
    store.objects.put_new(store.keys.commit(sid, 1), encode_line(other).data)
    session.commit([unit(8)])
    assert session.state.seq == 2
    session.close()
    state = store.load(sid)
    assert {"step[7]", "step[8]"} <= set(state.units)


def test_list_reads_list_pages_and_one_small_object_per_session(server, server_space):
    store = store_for(server, server_space)
    sessions = 12
    held = []
    for index in range(sessions):
        session = store.create(meta(), b"spec")
        for step in range(3):
            session.commit([unit(step)])
        if index % 3 == 0:
            held.append(session)  # running and held by a live process
        elif index % 3 == 1:
            session.commit([{"type": "status", "status": "completed"}])
            session.close()
        else:
            session.abandon()  # running with no holder: listed as stale
    counting = CountingClient(client_for(server))
    summaries = store_for(server, server_space, client=counting).list()
    for session in held:
        session.close()
    assert len(summaries) == sessions
    assert sorted(s.display_status for s in summaries) == ["completed"] * 4 + ["running"] * 4 + ["running (stale)"] * 4
    assert counting.counts["list_objects_v2"] == 2 * math.ceil(sessions / 1000)
    assert counting.counts["get_object"] == sessions
    assert counting.total == 2 + sessions


def test_delete_removes_every_object_of_the_session_but_its_fence(server, server_any_space):
    """Everything but the delete's own fence record (kept so a paused writer cannot recreate the session; see
    tests/s3/test_s3_visibility.py). (On a versioned bucket the deleted objects' older versions stay, as versioning
    means; see docs/storage.md.)"""
    space = server_any_space
    store = store_for(server, space, checkpoint_every=3)
    keep = store.create(meta(), b"spec")
    keep.close()
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    for index in range(8):
        session.commit([unit(index)])
    session.close()
    store.delete(sid)
    client = client_for(server)
    assert [k for k in _keys(client, space) if sid in k] == [f"{space.prefix}/sessions/{sid}/commits/000000000010"]
    assert [s.session_id for s in store.list()] == [keep.state.session_id]
    with pytest.raises(SessionNotFound):
        store.load(sid)


def test_resolve_takes_a_unique_prefix(s3_server, space):
    store = store_for(s3_server, space)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    session.close()
    assert store.resolve(sid[:8]) == sid
    assert store.resolve(sid) == sid
    with pytest.raises(SessionNotFound):
        store.resolve("00000000-0000-4000-8000-000000000000")


def test_objects_are_encrypted_at_rest_in_a_bucket_with_default_encryption(s3_server, special_buckets):
    space = Space(special_buckets["encrypted"], "sse")
    store = store_for(s3_server, space)
    marker = "plaintext-marker-4f1c9a"
    session = store.create(meta(), b"spec")
    session.commit([{"type": "unit", "unit": "step[0]", "record": {"response": marker}}])
    session.close()
    client = client_for(s3_server)
    for key in _keys(client, space, f"sessions/{session.state.session_id}/commits/"):
        assert client.head_object(Bucket=space.bucket, Key=key).get("ServerSideEncryption") == "AES256"
    assert store.load(session.state.session_id).units["step[0]"]["response"] == marker


def test_a_damaged_or_missing_commit_object_is_corruption_naming_its_key(server, server_space):
    store = store_for(server, server_space)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    for index in range(3):
        session.commit([unit(index)])
    session.close()
    client = client_for(server)
    damaged = store.keys.commit(sid, 2)
    client.put_object(Bucket=server_space.bucket, Key=damaged, Body=b"00000000 {not json}\n")
    with pytest.raises(CorruptSession) as corrupt:
        store.load(sid)
    assert corrupt.value.exit_code == ExitCode.SESSION_UNUSABLE
    assert f"s3://{server_space.bucket}/{damaged}" in str(corrupt.value)
    client.delete_object(Bucket=server_space.bucket, Key=damaged)
    with pytest.raises(CorruptSession) as gap:
        store.load(sid)
    assert f"s3://{server_space.bucket}/{damaged}: missing while commit 3 exists" in str(gap.value)


def test_commit_returns_its_records_seq(s3_server, space):
    session = store_for(s3_server, space).create(meta(), b"spec")
    assert [session.commit([unit(index)]) for index in range(3)] == [1, 2, 3]
    session.close()


def test_check_names_a_spec_snapshot_that_is_damaged_or_missing(server, server_space):
    """`sessions check` on S3 checks the spec snapshot a resume runs when the spec file is gone (issue 39, item 3)."""
    store = store_for(server, server_space)
    spec = b"version: 0\n"
    session = store.create({**meta(), "spec_hash": hashlib.sha256(spec).hexdigest()}, spec)
    sid = session.state.session_id
    session.close()
    key = store.keys.spec_snapshot(sid)
    where = f"s3://{server_space.bucket}/{key}"
    assert store.inspect(sid).findings == []
    client = client_for(server)
    client.put_object(Bucket=server_space.bucket, Key=key, Body=b"\x00garbage")
    assert [(f.severity, f.where, f.detail) for f in store.inspect(sid).findings] == [
        ("error", where, "does not hold the spec this session was created from (its sha256 differs)")
    ]
    client.delete_object(Bucket=server_space.bucket, Key=key)
    assert [(f.severity, f.where) for f in store.inspect(sid).findings] == [("error", where)]
