"""Requests per session operation on S3: a free lease is one PUT, an open asks nothing it will learn from its read,
a process reads each immutable object (commit, checkpoint) once, an exact id resolves with one GET, a seeded
session is not read back. Counted on the client, on SeaweedFS and on moto (bench/bench_s3_requests.py prints
them against a baseline revision)."""

from __future__ import annotations

from strands_durable.store.journal import encode_line
from strands_durable.testing.s3_faults import CountingClient
from tests.s3.support import as_a_fresh_process, client_for, meta, store_for, unit, unit_message

COMMITS = 12


def _closed_session(server, space) -> str:
    store = store_for(server, space)
    session = store.create(meta(), b"spec")
    for index in range(COMMITS):
        session.commit([unit(index)])
    session.close()
    return session.session_id


def _counting(server, space) -> tuple[CountingClient, object]:
    counting = CountingClient(client_for(server))
    return counting, store_for(server, space, client=counting)


def test_a_resume_in_a_process_that_read_the_session_asks_only_for_the_lease_the_listings_and_the_view(
    server, server_space
):
    session_id = _closed_session(server, server_space)
    counting, store = _counting(server, server_space)
    store.load(session_id)  # this process has now seen every commit object
    counting.reset()
    reopened = store.open(session_id)
    # the lease taken free (one PUT), the unit leases listed, the session listed (no GET: every object is known,
    # the scratch files are in that listing), the view written; no existence LIST first, no GET of a free lease
    assert dict(counting.counts) == {"put_object": 2, "list_objects_v2": 2}, counting.counts
    reopened.close()


def test_a_process_reads_each_commit_object_once(server, server_space):
    session_id = _closed_session(server, server_space)
    as_a_fresh_process()
    counting, store = _counting(server, server_space)
    store.load(session_id)
    assert counting.counts["get_object"] == COMMITS + 2  # the header, each commit, the close's record
    counting.reset()
    store.load(session_id)
    assert dict(counting.counts) == {"list_objects_v2": 1}, counting.counts


def test_a_commit_key_created_again_with_other_bytes_is_read_again(server, server_space, admin_client=None):
    """An entry is used only under the ETag the listing shows: a key deleted and written anew is fetched."""
    session_id = _closed_session(server, server_space)
    store = store_for(server, server_space)
    before = store.load(session_id)
    assert before.units["step[3]"]["response"] == "answer 3"
    key = store.keys.commit(session_id, 4)  # step[3]'s record (the header is record 0)
    record = store.objects.get(key)[0]
    assert b"answer 3" in record
    rewritten = encode_line({**_decoded(record), "events": [{**unit(3), "record": {"response": "other"}}]}).data
    admin = client_for(server)
    admin.delete_object(Bucket=server_space.bucket, Key=key)
    admin.put_object(Bucket=server_space.bucket, Key=key, Body=rewritten)
    assert store_for(server, server_space).load(session_id).units["step[3]"]["response"] == "other"


def _decoded(line: bytes) -> dict:
    from strands_durable.store.journal import decode_line

    return decode_line(line).record


def test_an_exact_id_resolves_with_one_get_and_a_missing_one_is_not_found(server, server_space):
    import pytest

    from strands_durable.errors import SessionNotFound

    session_id = _closed_session(server, server_space)
    counting, store = _counting(server, server_space)
    assert store.resolve(session_id) == session_id
    assert dict(counting.counts) == {"get_object": 1}
    with pytest.raises(SessionNotFound):
        store.resolve("0" * 8 + session_id[8:])
    assert store.resolve(session_id[:8]) == session_id  # a prefix is still matched against the listed views


def test_a_seeded_session_is_written_and_not_read_back(server, server_space):
    from strands_durable.store.state import snapshot

    session_id = _closed_session(server, server_space)
    source = store_for(server, server_space)
    journal = source.journal_bytes(session_id)
    header_end = journal.index(b"\n") + 1
    header = _decoded(journal[:header_end])
    target = meta()["session_id"]
    header["events"][0]["meta"] = {**header["events"][0]["meta"], "session_id": target}
    counting, store = _counting(server, server_space)
    store.seed(target, header=header, tail=journal[header_end:], spec_snapshot=b"spec")
    assert dict(counting.counts) == {"put_object": 3}, counting.counts  # spec, header and tail as one object, view
    seeded, original = snapshot(store.load(target)), snapshot(source.load(session_id))
    assert seeded["units"] == original["units"]


def test_a_resume_of_a_session_whose_view_is_current_does_not_write_it_again(server, server_space):
    """`resolve` reads the view; the `open` that follows folds the very same view from the commits and leaves the
    bucket's be (one PUT fewer per resume). A view that lags the commits (its writer died before writing it) is
    written by the open, and one read by `resolve` is used only by the next open of that session."""
    import json

    from strands_durable.store.s3.session import view_bytes

    session_id = _closed_session(server, server_space)
    counting, store = _counting(server, server_space)
    store.resolve(session_id)
    counting.reset()
    reopened = store.open(session_id)
    assert counting.counts["put_object"] == 1, counting.counts  # the lease only: the view is the bucket's already
    reopened.commit([unit_message("late", 0)])  # a message writes no view: a crash now leaves the view lagging
    reopened.abandon()
    lagging = json.loads(store.objects.get(store.keys.view(session_id))[0])
    store.resolve(session_id)
    counting.reset()
    again = store.open(session_id)
    assert counting.counts["put_object"] == 1 + 1, counting.counts  # the lease, and the view the crash left behind
    written = store.objects.get(store.keys.view(session_id))[0]
    assert written == view_bytes(again.state) and json.loads(written)["journal_seq"] > lagging["journal_seq"]
    again.close()
    counting.reset()
    store.open(session_id).close()  # no `resolve` before it: the open writes the view as always
    assert counting.counts["put_object"] >= 3, counting.counts  # the lease, the view, the close's commit (+ view)
