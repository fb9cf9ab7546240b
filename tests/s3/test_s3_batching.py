"""`durable=False` commits on S3 are PUT with the next commit (one object holding several records), as
docs/storage.md#deferred-commits-and-the-barrier allows for records that are re-derived: fewer PUTs, the same
fold, a crash loses only those records, and the fencing and race rules hold for the held records too."""

from __future__ import annotations

import time

import pytest

from strands_durable.errors import SessionFenced
from strands_durable.store.journal import encode_line
from tests.s3.support import client_for, meta, store_for, unit


def _message(index: int, role: str = "user") -> dict:
    message = {"role": role, "content": [{"text": f"message {index}"}]}
    return {"type": "message", "conv": "w", "agent": "w", "unit": "step[0]", "index": index, "message": message}


def _round_trips(session, count: int) -> None:
    """A prompt (not durable), the answer (durable), and the unit's outcome (not durable), `count` times."""
    for turn in range(count):
        session.commit([_message(2 * turn)], durable=False)
        session.commit([_message(2 * turn + 1, "assistant")])
        session.commit([unit(turn)], durable=False)


class PutLog:
    """A real client that remembers the key of every PUT."""

    def __init__(self, client) -> None:
        self._client = client
        self.keys: list[str] = []

    @property
    def meta(self):
        return self._client.meta

    def put_object(self, **kwargs):
        self.keys.append(kwargs["Key"])
        return self._client.put_object(**kwargs)

    def __getattr__(self, name):
        return getattr(self._client, name)


@pytest.mark.parametrize(("batch", "commit_puts"), [(True, 6), (False, 18)])
def test_held_commits_ride_with_the_next_put_and_reopen_to_the_same_fold(s3_server, space, batch, commit_puts):
    log = PutLog(client_for(s3_server))
    store = store_for(s3_server, space, client=log, batch=batch, checkpoint_every=5, strict=False)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    log.keys.clear()
    _round_trips(session, 6)
    assert len([key for key in log.keys if "/commits/" in key]) == commit_puts  # 6 durable answers; 18 commits
    messages, units, seq = session.state.conversations["w"].messages, dict(session.state.units), session.state.seq
    session.close()
    loaded = store_for(s3_server, space, checkpoint_every=5).load(sid)
    assert loaded.conversations["w"].messages == messages and loaded.units == units
    assert loaded.seq == seq + 1 == 19  # header 0, records 1-18 and the close mark, numbered without a gap


def test_a_batch_is_one_object_and_a_reader_chains_across_it(s3_server, space):
    store = store_for(s3_server, space, strict=False)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    session.commit([_message(0)], durable=False)
    session.commit([_message(1, "assistant")], durable=False)
    session.commit([unit(0)])
    session.commit([_message(2)])
    keys = sorted(
        item["Key"].rsplit("/", 1)[1]
        for item in client_for(s3_server).list_objects_v2(
            Bucket=space.bucket, Prefix=f"{space.prefix}/sessions/{sid}/commits/"
        )["Contents"]
    )
    assert keys == ["000000000000", "000000000001", "000000000004"]  # header, records 1-3 in one object, 4
    session.close()
    state = store_for(s3_server, space).load(sid)
    assert len(state.conversations["w"].messages) == 3 and "step[0]" in state.units and state.seq == 5


def test_a_crash_loses_only_the_held_records(s3_server, space):
    store = store_for(s3_server, space, strict=False)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    session.commit([_message(0)])
    durable_seq = session.state.seq
    session.commit([_message(1, "assistant")], durable=False)
    session.abandon()  # what a killed process leaves
    state = store_for(s3_server, space).load(sid)
    assert state.seq == durable_seq and len(state.conversations["w"].messages) == 1


def test_a_holder_with_held_records_is_fenced_out_by_a_takeover(s3_server, space):
    opts = {"lease_ttl_s": 0.6, "lease_skew_s": 0.1, "strict": False}
    holder = store_for(s3_server, space, **opts).create(meta(), b"spec")
    sid = holder.state.session_id
    holder.commit([_message(0)])
    holder.commit([_message(1, "assistant")], durable=False)  # held: the taker never sees it
    holder._lease.stop_renewing()
    time.sleep(0.8)
    taker = store_for(s3_server, space, **opts).open(sid)
    assert taker.state.seq == 2  # header, message 0, the fence (at the seq the held record had)
    with pytest.raises(SessionFenced):
        holder.commit([unit(0)])
    taker.close()
    state = store_for(s3_server, space).load(sid)
    assert len(state.conversations["w"].messages) == 1 and "step[0]" not in state.units


def test_a_lost_race_without_a_fence_renumbers_the_held_records_after_the_winners(s3_server, space):
    store = store_for(s3_server, space, strict=False)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    session.commit([_message(0)], durable=False)  # held at seq 1
    other = {"seq": 1, "at": "2026-01-01T00:00:00+00:00", "events": [unit(7)], "writer": "another-writer"}
    store.objects.put_new(store.keys.commit(sid, 1), encode_line(other).data)
    assert session.commit([unit(8)]) == 3  # the winner's record 1, ours renumbered 2, this one 3
    session.close()
    state = store_for(s3_server, space).load(sid)
    assert {"step[7]", "step[8]"} <= set(state.units) and len(state.conversations["w"].messages) == 1
    assert state.seq == 4
