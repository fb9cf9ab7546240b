"""What the store relies on S3 servers for, asserted on each server the S3 tests run on (SeaweedFS, the reference,
and moto's server mode): each conditional-write behaviour, in a plain and in a versioned bucket, and the answers
in which the two differ. Differences found are listed in docs/storage.md ("Two servers")."""

from __future__ import annotations

import uuid

import pytest

from strands_durable.store.s3.client import KeyTaken, Objects
from tests.s3.support import bucket_on, client_for, server_name


def test_if_match_on_a_missing_key_is_a_lost_condition_on_both_servers(server, server_space):
    """The one difference found in what the servers answer: If-Match on a missing key is 412 on SeaweedFS and
    404 NoSuchKey on moto (as on AWS). Our client layer makes both a lost condition (KeyTaken)."""
    from botocore.exceptions import ClientError

    client, space = client_for(server), server_space
    key = f"{space.prefix}/missing"
    with pytest.raises(ClientError) as raw:
        client.put_object(Bucket=space.bucket, Key=key, Body=b"x", IfMatch='"0123"')
    answered = raw.value.response["ResponseMetadata"]["HTTPStatusCode"]
    assert answered == {"seaweedfs": 412, "moto": 404}[server_name(server)]
    with pytest.raises(KeyTaken):
        Objects(client, space.bucket).put_if_match(key, b"x", '"0123"')
    assert Objects(client, space.bucket).get(key) is None


# -- the audit: each conditional-write behaviour the store relies on, asserted on both servers ----------------


@pytest.fixture(params=["plain", "versioned"])
def audited(request, server) -> tuple[str, object, str, str]:
    """(server name, a raw boto3 client, bucket, a key prefix of this test's own) on each server, in a plain and
    in a versioned bucket."""
    return server_name(server), client_for(server), bucket_on(server, request.param), f"audit-{uuid.uuid4().hex[:12]}"


def _refusal(call) -> tuple[int, str]:
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as refused:
        call()
    response = refused.value.response
    return response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"]


def _body(client, bucket: str, key: str) -> bytes:
    return client.get_object(Bucket=bucket, Key=key)["Body"].read()


def test_if_none_match_on_an_existing_key_is_refused_on_both_servers(audited):
    """Every commit and checkpoint PUT: a lost race is a 412, and the winner's bytes stay."""
    _server, client, bucket, prefix = audited
    key = f"{prefix}/commit"
    client.put_object(Bucket=bucket, Key=key, Body=b"winner", IfNoneMatch="*")
    assert _refusal(lambda: client.put_object(Bucket=bucket, Key=key, Body=b"loser", IfNoneMatch="*")) == (
        412,
        "PreconditionFailed",
    )
    assert _body(client, bucket, key) == b"winner"
    with pytest.raises(KeyTaken):
        Objects(client, bucket).put_new(key, b"loser")


def test_if_match_with_a_stale_etag_is_refused_on_both_servers(audited):
    """Lease renewal and takeover: a replaced lease refuses the ETag its previous reader saw."""
    _server, client, bucket, prefix = audited
    key = f"{prefix}/lease"
    first = client.put_object(Bucket=bucket, Key=key, Body=b"one")["ETag"]
    second = client.put_object(Bucket=bucket, Key=key, Body=b"two", IfMatch=first)["ETag"]
    assert second != first
    assert _refusal(lambda: client.put_object(Bucket=bucket, Key=key, Body=b"three", IfMatch=first)) == (
        412,
        "PreconditionFailed",
    )
    assert _body(client, bucket, key) == b"two"
    with pytest.raises(KeyTaken):
        Objects(client, bucket).put_if_match(key, b"three", first)


def test_delete_with_if_match_on_both_servers(audited):
    """Releasing a lease deletes it only if it is still ours. One difference: on a missing key SeaweedFS answers
    412 and moto (as AWS) 404; `Objects.delete` makes both a failed condition."""
    server, client, bucket, prefix = audited
    key = f"{prefix}/lease"
    stale = client.put_object(Bucket=bucket, Key=key, Body=b"one")["ETag"]
    current = client.put_object(Bucket=bucket, Key=key, Body=b"two")["ETag"]
    assert _refusal(lambda: client.delete_object(Bucket=bucket, Key=key, IfMatch=stale)) == (412, "PreconditionFailed")
    assert _body(client, bucket, key) == b"two"
    assert Objects(client, bucket).delete(key, if_match=stale) is False
    assert Objects(client, bucket).delete(key, if_match=current) is True
    assert Objects(client, bucket).get(key) is None
    missing = _refusal(lambda: client.delete_object(Bucket=bucket, Key=key, IfMatch=current))
    assert missing == {"seaweedfs": (412, "PreconditionFailed"), "moto": (404, "NoSuchKey")}[server]
    assert Objects(client, bucket).delete(key, if_match=current) is False
    assert Objects(client, bucket).delete(key) is True  # unconditional: a missing key is fine


@pytest.mark.parametrize("how", ["delete_object", "delete_objects"])
def test_a_deleted_key_leaves_list_and_get_and_accepts_if_none_match_again_on_both_servers(audited, how):
    """What compaction and delete rely on: a deleted key is gone from the next LIST and GET at once (a reader
    never chains into a deleted commit), and it accepts If-None-Match: * again, on a versioned bucket too (its
    delete marker does not count as existing): why fence objects are never deleted."""
    _server, client, bucket, prefix = audited
    keys = [f"{prefix}/commits/{seq:012d}" for seq in range(3)]
    for key in keys:
        client.put_object(Bucket=bucket, Key=key, Body=b"record", IfNoneMatch="*")
    if how == "delete_object":
        client.delete_object(Bucket=bucket, Key=keys[1])
    else:
        client.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": keys[1]}, {"Key": f"{prefix}/none"}]})
    listed = [item.key for item in Objects(client, bucket).list(f"{prefix}/")]
    assert listed == [keys[0], keys[2]]
    assert _refusal(lambda: client.get_object(Bucket=bucket, Key=keys[1])) == (404, "NoSuchKey")
    client.put_object(Bucket=bucket, Key=keys[1], Body=b"a paused writer's late PUT", IfNoneMatch="*")
    assert _body(client, bucket, keys[1]) == b"a paused writer's late PUT"
