"""S3 failures injected through a faulting client over the real server, and the clean errors of a bad setup."""

from __future__ import annotations

import pytest

from strands_durable import S3Store
from strands_durable.errors import (
    ExitCode,
    S3AccessDenied,
    S3BucketMissing,
    S3EndpointUnreachable,
    StorageIOError,
)
from strands_durable.testing.s3_faults import (
    RESET_BEFORE,
    RESET_MID_PUT,
    SERVER_ERROR,
    SLOW_DOWN,
    TIMEOUT_AFTER_WRITE,
    CountingClient,
    FaultingClient,
    precondition_failed,
)
from strands_durable.testing.s3_server import READONLY_KEY, free_ports
from tests.s3.support import FAST_RETRIES, as_a_fresh_process, client_for, meta, store_for, unit


def _commit_puts(kwargs) -> bool:
    return "/commits/" in kwargs.get("Key", "") and "IfNoneMatch" in kwargs


@pytest.mark.parametrize(
    "fault",
    [SERVER_ERROR, SLOW_DOWN, TIMEOUT_AFTER_WRITE, RESET_MID_PUT, RESET_BEFORE, (precondition_failed, False)],
    ids=["500", "503-slowdown", "timeout-after-write", "reset-mid-put", "reset-before-send", "412-race"],
)
def test_a_commit_survives_a_failed_put_exactly_once(server, server_space, fault):
    """Whatever happened to the PUT, the commit lands once at its key and the next commit takes the next key."""
    faulting = FaultingClient(client_for(server))
    store = store_for(server, server_space, client=faulting)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    faulting.plan("put_object", fault, when=_commit_puts)
    session.commit([unit(1)])
    assert faulting.injected, "the fault was not injected"
    session.commit([unit(2)])
    session.close()
    state = store_for(server, server_space).load(sid)
    assert list(state.units) == ["step[1]", "step[2]"]
    assert state.seq == 3  # header, two commits, the close mark: nothing written twice, nothing skipped


def test_an_unknown_outcome_is_read_back_not_rewritten(server, server_space):
    """A PUT that landed but whose reply was lost is resolved by one GET of its key, never by a second PUT."""
    counting = CountingClient(client_for(server))
    faulting = FaultingClient(counting)
    session = store_for(server, server_space, client=faulting).create(meta(), b"spec")
    faulting.plan("put_object", RESET_MID_PUT, when=_commit_puts)
    counting.reset()
    session.commit([{"type": "attempt", "unit": "step[0]", "conv": "c", "attempt": 1, "error": "x", "wait_s": 0}])
    assert counting.counts["put_object"] == 1  # (an attempt record does not refresh the session's view)
    assert counting.counts["get_object"] == 1
    session.close()


def test_reads_are_retried_through_server_errors(s3_server, space):
    store = store_for(s3_server, space)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    session.commit([unit(1)])
    session.close()
    faulting = FaultingClient(client_for(s3_server))
    faulting.plan("list_objects_v2", SLOW_DOWN)
    faulting.plan("get_object", SERVER_ERROR, times=2)
    as_a_fresh_process()  # its reads are GETs, not this process's memory of the commits
    assert "step[1]" in store_for(s3_server, space, client=faulting).load(sid).units
    assert faulting.pending == 0


def test_a_server_that_keeps_failing_is_a_clean_io_error_and_commits_nothing(s3_server, space):
    faulting = FaultingClient(client_for(s3_server))
    store = store_for(s3_server, space, client=faulting)
    session = store.create(meta(), b"spec")
    sid = session.state.session_id
    faulting.plan("put_object", SLOW_DOWN, times=len(FAST_RETRIES) + 1, when=_commit_puts)
    with pytest.raises(StorageIOError) as failed:
        session.commit([unit(1)])
    assert failed.value.exit_code == ExitCode.IO
    assert s3_server.endpoint in str(failed.value) and space.bucket in str(failed.value)
    assert "SlowDown" in str(failed.value)
    assert session.state.seq == 0
    session.abandon()
    assert store_for(s3_server, space).load(sid).units == {}


def test_a_lease_renewal_whose_reply_was_lost_keeps_the_lease(server, server_space):
    faulting = FaultingClient(client_for(server))
    session = store_for(server, server_space, client=faulting).create(meta(), b"spec")
    faulting.plan("put_object", TIMEOUT_AFTER_WRITE, when=lambda kw: "/leases/" in kw["Key"] and "IfMatch" in kw)
    session._lease.renew()
    assert faulting.injected and session._lease.lost is None
    session.commit([unit(1)])
    session.close()


def test_missing_bucket_is_exit_12_naming_it(s3_server):
    store = S3Store("no-such-bucket-here", "x", client=client_for(s3_server), retry_delays=FAST_RETRIES)
    with pytest.raises(S3BucketMissing) as missing:
        store.create(meta(), b"spec")
    assert missing.value.exit_code == ExitCode.IO
    assert str(missing.value) == f"S3 bucket not found: no-such-bucket-here (endpoint {s3_server.endpoint})"
    with pytest.raises(S3BucketMissing):
        store.list()


def test_bad_credentials_are_exit_12_naming_the_bucket(s3_server, space):
    client = client_for(s3_server, access_key=s3_server.access_key, secret_key="not-the-secret")
    store = S3Store(space.bucket, space.prefix, client=client, retry_delays=FAST_RETRIES)
    with pytest.raises(S3AccessDenied) as denied:
        store.list()
    assert denied.value.exit_code == ExitCode.IO
    assert f"Access denied to S3 bucket {space.bucket} at {s3_server.endpoint}" in str(denied.value)


def test_a_read_only_identity_cannot_create_a_session(s3_server, space):
    client = client_for(s3_server, access_key=READONLY_KEY[0], secret_key=READONLY_KEY[1])
    store = S3Store(space.bucket, space.prefix, client=client, retry_delays=FAST_RETRIES)
    assert store.list() == []  # reading is allowed
    with pytest.raises(S3AccessDenied):
        store.create(meta(), b"spec")
    assert store_for(s3_server, space).list() == []  # nothing half-created


def test_an_unreachable_endpoint_is_exit_12_naming_it():
    (port,) = free_ports(1)
    from strands_durable.store.s3.client import make_client

    client = make_client(f"http://127.0.0.1:{port}", "k", "s")
    store = S3Store("some-bucket", "", client=client, retry_delays=(0.01,))
    with pytest.raises(S3EndpointUnreachable) as unreachable:
        store.list()
    assert unreachable.value.exit_code == ExitCode.IO
    assert str(unreachable.value) == f"S3 endpoint unreachable: http://127.0.0.1:{port} (bucket some-bucket)"


def test_a_view_or_compaction_that_fails_after_the_commit_landed_does_not_fail_the_commit(s3_server, space):
    """The commit record is the truth: a failing view write or checkpoint leaves the view lagging and the
    compaction to a later commit, and the caller is not told that a durable commit failed."""
    faulting = FaultingClient(client_for(s3_server))
    session = store_for(s3_server, space, client=faulting, checkpoint_every=3).create(meta(), b"spec")
    sid = session.state.session_id
    faulting.plan(
        "put_object", SLOW_DOWN, times=100, when=lambda kw: "/views/" in kw["Key"] or "/checkpoints/" in kw["Key"]
    )
    for index in range(4):
        session.commit([unit(index)])
    assert faulting.injected
    faulting._plans.clear()
    session.close()
    assert list(store_for(s3_server, space).load(sid).units) == [f"step[{i}]" for i in range(4)]
