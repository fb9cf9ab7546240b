"""A strict S3 store (`strict=True`, or STRANDS_DURABLE_STRICT=1, which every test sets) checks what the local
strict store checks: every history a commit touches is valid as stored, and the session read back (checksums,
seqs against keys, no gap) holds exactly the records its writer committed, at each compaction and at close."""

from __future__ import annotations

import pytest

from strands_durable.errors import CorruptSession
from strands_durable.store.journal import encode_line
from tests.s3.support import client_for, meta, store_for, unit


def _message(index: int, role: str, text: str) -> dict:
    message = {"role": role, "content": [{"text": text}]}
    event = {"type": "message", "conv": "writer", "agent": "writer", "unit": "step[0]", "index": index}
    return {**event, "message": message}


def test_a_strict_store_refuses_a_commit_that_stores_an_invalid_history(s3_server, space):
    store = store_for(s3_server, space, strict=True)
    session = store.create(meta(), b"spec")
    session.commit([_message(0, "user", "hello")])
    with pytest.raises(AssertionError, match="strict store: invalid stored history for writer"):
        session.commit([_message(1, "user", "hello again")])  # two user turns in a row
    session.abandon()
    lenient = store_for(s3_server, space, strict=False).create(meta(), b"spec")
    lenient.commit([_message(0, "user", "hello")])
    lenient.commit([_message(1, "user", "hello again")])  # not checked without strict
    lenient.abandon()


def test_a_strict_store_reads_its_session_back_at_every_checkpoint_and_at_close(s3_server, space):
    store = store_for(s3_server, space, strict=True, checkpoint_every=4)
    session = store.create(meta(), b"spec")
    turns = [("user", "q"), ("assistant", "a")] * 5
    for index, (role, text) in enumerate(turns):
        session.commit([_message(index, role, f"{text}{index}")])
    session.close()
    assert len(store.load(session.state.session_id).conversations["writer"].messages) == 10


@pytest.mark.parametrize("damage", ["other-record", "bad-checksum", "missing"])
def test_a_strict_close_finds_a_commit_object_changed_behind_the_writers_back(s3_server, space, damage):
    store = store_for(s3_server, space, strict=True)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    for index in range(3):
        session.commit([unit(index)])
    key = store.keys.commit(sid, 2)
    client = client_for(s3_server)
    if damage == "missing":
        client.delete_object(Bucket=space.bucket, Key=key)
    else:
        other = encode_line({"seq": 2, "at": "2026-01-01T00:00:00+00:00", "events": [unit(9)], "writer": "x"}).data
        client.put_object(Bucket=space.bucket, Key=key, Body=other if damage == "other-record" else b"0" + other[1:])
    expected = {
        "other-record": (AssertionError, f"strict store: session {sid} holds another record at seq 2"),
        "bad-checksum": (CorruptSession, f"{key}: not exactly one whole commit record"),
        "missing": (CorruptSession, f"{store.keys.commit(sid, 2)}: missing while commit 3 exists"),
    }[damage]
    with pytest.raises(expected[0]) as raised:
        session.close()
    assert expected[1] in str(raised.value), str(raised.value)


def test_a_lenient_close_does_not_read_the_session_back(s3_server, space):
    store = store_for(s3_server, space, strict=False)  # the tests' default is strict (tests/conftest.py)
    session = store.create(meta(), b"spec")
    session.commit([unit(0)])
    client = client_for(s3_server)
    key = store.keys.commit(session.state.session_id, 1)
    client.delete_object(Bucket=space.bucket, Key=key)
    session.close()  # the damage is found by the next reader, not by the writer
    with pytest.raises(CorruptSession):
        store.load(session.state.session_id)
