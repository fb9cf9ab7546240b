"""Checkpoints on S3 hold the session's folded state (store/s3/compaction.py): their size follows the live state,
not the history; they keep the fences they cover; sessions checkpointed by earlier releases (records 0..seq
concatenated) still open; a strict writer reads back exactly what it wrote."""

from __future__ import annotations

import pytest

from strands_durable.errors import SessionFenced
from strands_durable.store.journal import encode_line, read_journal
from strands_durable.testing.s3_faults import SLOW_DOWN, CountingClient, FaultingClient
from tests.s3.support import client_for, meta, pause_a_writer, store_for, unit


def _checkpoints(store, sid: str) -> dict[int, bytes]:
    prefix = store.keys.checkpoints(sid)
    found = {}
    for listed in store.objects.list(prefix):
        found[int(listed.key.rsplit("/", 1)[1])] = store.objects.get(listed.key)[0]
    return found


def _revision(index: int) -> dict:
    """A unit rewritten again and again: the live state stays one unit while the history grows."""
    return {"type": "unit", "unit": "step[0]", "record": {"response": f"revision {index} " + "x" * 400}}


def test_a_checkpoint_holds_the_live_state_so_it_does_not_grow_with_the_history(server, server_space):
    store = store_for(server, server_space, checkpoint_every=8)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    sizes = []
    for index in range(80):
        session.commit([_revision(index)])
        held = _checkpoints(store, sid)
        if held and (not sizes or sizes[-1][0] != max(held)):
            sizes.append((max(held), len(held[max(held)])))
    assert len(sizes) == 10, sizes  # a checkpoint every 8 commits
    first, last = sizes[0][1], sizes[-1][1]
    assert last < first * 1.1, sizes  # 80 commits of history, one unit of state: the same size
    seq, data = sizes[-1][0], _checkpoints(store, sid)[sizes[-1][0]]
    contents = read_journal(sid, data)
    assert next(r.get("kind") for r in contents.records) == "strands-durable-journal"
    assert len(contents.records) == 2 and "checkpoint" in contents.records[1]
    assert contents.records[1]["checkpoint"]["units"] == {"step[0]": _revision(seq - 1)["record"]}  # commit seq
    session.close()
    assert store_for(server, server_space).load(sid).units == {"step[0]": _revision(79)["record"]}


def test_a_session_checkpointed_by_an_earlier_release_still_opens_and_compacts_anew(server, server_space):
    """The earlier form: `checkpoints/<seq>` holding records 0..seq concatenated, covered commits deleted except
    fences. It reads within the same request bound, its fences still refuse the writer they fenced out, and the
    next compaction replaces it with the new form."""
    opts = {"lease_ttl_s": 0.6, "lease_skew_s": 0.1, "checkpoint_every": 10**6}
    paused = pause_a_writer(store_for(server, server_space, **opts))  # between its lease check and its PUT
    sid = paused.session.state.session_id
    taker = store_for(server, server_space, **opts).open(sid)
    fence_seq = taker.state.seq
    for index in range(2, 12):
        taker.commit([unit(index)])
    taker.close()
    client = client_for(server)
    store = store_for(server, server_space)
    seq = store.load(sid).seq
    records = [store.objects.get(store.keys.commit(sid, s))[0] for s in range(seq + 1)]
    client.put_object(Bucket=server_space.bucket, Key=store.keys.checkpoint(sid, seq), Body=b"".join(records))
    store.objects.delete_many([store.keys.commit(sid, s) for s in range(seq + 1) if s != fence_seq])

    counting = CountingClient(client_for(server))
    state = store_for(server, server_space, client=counting).load(sid)
    assert list(state.units) == ["step[0]", *[f"step[{i}]" for i in range(2, 12)]] and state.seq == seq
    assert (counting.counts["list_objects_v2"], counting.counts["get_object"]) == (1, 1)
    refused = paused.finish()  # its key is the fence's, kept: refused, and the fence found in the checkpoint
    assert isinstance(refused, SessionFenced) and f"commit {fence_seq} is a fence" in str(refused), refused

    writer = store_for(server, server_space, checkpoint_every=4).open(sid)
    for index in range(12, 16):
        writer.commit([unit(index)])
    writer.close()
    (new_seq, data), *older = sorted(_checkpoints(store, sid).items(), reverse=True)
    assert older == [] and new_seq > seq
    assert "checkpoint" in read_journal(sid, data).records[1]  # the new form replaced the old one
    final = store_for(server, server_space).load(sid)
    assert list(final.units) == ["step[0]", *[f"step[{i}]" for i in range(2, 16)]]


def test_a_strict_compaction_finds_a_commit_changed_before_it_deletes_it(s3_server, space):
    """The commits a checkpoint covers are read back before they are deleted: one replaced behind the writer's
    back is found then, not lost with them."""
    store = store_for(s3_server, space, strict=True, checkpoint_every=4)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    for index in range(2):  # seq 1 and 2; the commit at seq 3 makes a checkpoint due (every 4 records)
        session.commit([unit(index)])
    other = encode_line({"seq": 2, "at": "2026-01-01T00:00:00+00:00", "events": [unit(9)], "writer": "x"}).data
    client_for(s3_server).put_object(Bucket=space.bucket, Key=store.keys.commit(sid, 2), Body=other)
    with pytest.raises(AssertionError, match=f"strict store: session {sid} holds another record at seq 2"):
        session.commit([unit(2)])  # the commit lands; the compaction it makes due reads the session back first
    assert store.objects.get(store.keys.commit(sid, 2)) is not None  # nothing was deleted
    session.abandon()


def test_a_strict_close_finds_its_checkpoint_replaced(s3_server, space):
    store = store_for(s3_server, space, strict=True, checkpoint_every=4)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    for index in range(5):
        session.commit([unit(index)])
    (seq, data), *_ = _checkpoints(store, sid).items()
    contents = read_journal(sid, data)
    forged = contents.records[1]
    forged["checkpoint"]["units"]["step[0]"] = {"response": "forged"}
    client_for(s3_server).put_object(
        Bucket=space.bucket,
        Key=store.keys.checkpoint(sid, seq),
        Body=data.split(b"\n")[0] + b"\n" + encode_line(forged).data,
    )
    with pytest.raises(AssertionError, match=f"strict store: session {sid} holds checkpoint {seq}, not the writer's"):
        session.close()


def test_commits_are_deleted_only_once_the_checkpoint_covering_them_exists(server, server_space):
    """A checkpoint PUT that keeps failing, then the writer dies: every commit it made is still there for the
    next reader. (Fails when the covered commits are deleted before the checkpoint lands.)"""
    faulting = FaultingClient(client_for(server))
    store = store_for(server, server_space, client=faulting, checkpoint_every=3)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    faulting.plan("put_object", SLOW_DOWN, times=10**6, when=lambda kw: "/checkpoints/" in kw["Key"])
    for index in range(7):
        session.commit([unit(index)])  # a due compaction fails after its retries; the commits stand
    assert faulting.injected
    session.abandon()  # dies before any compaction succeeded
    state = store_for(server, server_space).load(sid)
    assert list(state.units) == [f"step[{i}]" for i in range(7)]
    assert list(store.objects.list(store.keys.checkpoints(sid))) == []
