"""The S3 client layer: a boto3 client with botocore's retries off, and `Objects`, the few operations the store
needs with our own retries, conditional writes resolved by reading back, and S3 errors turned into ours.

botocore's retries are off everywhere: a conditional PUT retried by botocore after its first attempt landed would
see its own 412 and report a lost race. Our retry reads the key first: the PUT whose outcome is unknown (a timeout,
a reset connection, a 5xx) is resolved by what the key holds, never guessed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from strands_durable.errors import S3AccessDenied, S3BucketMissing, S3EndpointUnreachable, StorageIOError

GET_CONCURRENCY = 8
RETRY_DELAYS_S = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)
_DENIED = {"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "403"}
_CONFLICT = {"PreconditionFailed", "ConditionalRequestConflict", "412", "409"}
_MISSING_KEY = {"NoSuchKey", "404", "NotFound"}


def make_client(
    endpoint: str | None = None,
    access_key: str | None = None,
    secret_key: str | None = None,
    region: str | None = None,
    *,
    session: Any = None,
) -> Any:
    """A boto3 S3 client (boto3 is imported here, not before). Unset arguments come from the standard AWS
    configuration: AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, AWS_REGION, the credential chain. Path-style addressing
    when an endpoint is given (local servers), botocore retries off (see the module's docstring). `session`: the
    boto3 Session to build it from (one that built a client already has the service's model loaded: the next
    client costs milliseconds instead of a few hundred; a new Session by default)."""
    import boto3
    from botocore.config import Config

    endpoint = endpoint or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or None
    session = session if session is not None else boto3.session.Session()
    config = Config(
        retries={"max_attempts": 1, "mode": "standard"},
        s3={"addressing_style": "path"} if endpoint else {},
        connect_timeout=5,
        read_timeout=20,
        signature_version="s3v4",
    )
    return session.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=access_key,
        aws_secret_access_key=secret_key,
        region_name=region or session.region_name or "us-east-1",
        config=config,
    )


def endpoint_of(client: Any) -> str:
    meta = getattr(client, "meta", None)
    return str(getattr(meta, "endpoint_url", None) or "the S3 endpoint")


class KeyTaken(Exception):
    """A conditional write lost: the key exists with other bytes (If-None-Match), or changed (If-Match)."""


@dataclass(frozen=True)
class Listed:
    key: str
    last_modified: float  # seconds since the epoch, the server's clock
    size: int


def _error_code(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return None
    code = str(response.get("Error", {}).get("Code", ""))
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code or (str(status) if status else None)


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return None


class Objects:
    """One bucket (and key prefix) through a client; every call retried here, errors mapped to ours."""

    def __init__(
        self,
        client: Any,
        bucket: str,
        *,
        retry_delays: tuple[float, ...] = RETRY_DELAYS_S,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.client = client
        self.bucket = bucket
        self.endpoint = endpoint_of(client)
        self.retry_delays = retry_delays
        self._sleep = sleep

    # -- error handling -------------------------------------------------------------------------------
    def failed(self, what: str, cause: object, *, verb: str = "failed") -> StorageIOError:
        return StorageIOError(f"S3 {what} {verb} at {self.endpoint} (bucket {self.bucket}): {cause}")

    def _classify(self, exc: BaseException, what: str) -> tuple[str, BaseException | None]:
        """('conflict' | 'missing' | 'transient' | 'fatal', the error to raise when fatal or out of retries)."""
        from botocore import exceptions as bx

        code = _error_code(exc)
        status = _status(exc)
        if isinstance(exc, bx.ClientError):
            if code == "NoSuchBucket":
                return "fatal", S3BucketMissing(self.bucket, self.endpoint)
            if code in _DENIED or status == 403:
                return "fatal", S3AccessDenied(self.bucket, self.endpoint, code or "403")
            if code in _CONFLICT or status in (409, 412):
                return "conflict", None
            if code in _MISSING_KEY or status == 404:
                return "missing", None
            if status is None or status >= 500 or code in ("SlowDown", "RequestTimeout", "InternalError"):
                return "transient", self.failed(what, code)
            return "fatal", self.failed(what, code, verb="refused")
        if isinstance(exc, bx.NoCredentialsError | bx.PartialCredentialsError):
            return "fatal", S3AccessDenied(self.bucket, self.endpoint, "no credentials found")
        if isinstance(exc, bx.EndpointConnectionError | bx.ConnectTimeoutError):
            return "transient", S3EndpointUnreachable(self.endpoint, self.bucket)
        if isinstance(exc, bx.BotoCoreError | OSError):
            # read timeouts, connections reset or closed mid-request: the outcome of a write is unknown
            return "transient", self.failed(what, exc)
        return "fatal", None

    def _retrying(self, what: str, call: Callable[[], Any], *, missing_ok: bool = False) -> Any:
        """`call()` retried on transient errors (for idempotent requests: reads, lists, deletes, plain PUTs)."""
        for attempt in range(len(self.retry_delays) + 1):
            try:
                return call()
            except Exception as exc:
                kind, error = self._classify(exc, what)
                if kind == "missing" and missing_ok:
                    return None
                if kind == "transient" and attempt < len(self.retry_delays):
                    self._sleep(self.retry_delays[attempt])
                    continue
                if kind == "conflict":
                    raise KeyTaken(what) from exc
                if error is None:
                    raise
                raise error from exc
        raise AssertionError("unreachable")

    # -- reads ----------------------------------------------------------------------------------------
    def get(self, key: str) -> tuple[bytes, str] | None:
        """The object's bytes and ETag, or None when there is no such key."""

        def call() -> tuple[bytes, str]:
            response = self.client.get_object(Bucket=self.bucket, Key=key)
            return response["Body"].read(), response.get("ETag", "")

        return self._retrying(f"GET {key}", call, missing_ok=True)

    def get_many(self, keys: list[str]) -> list[tuple[bytes, str] | None]:
        """`get` of each key, in order, up to GET_CONCURRENCY at a time (latency, not request count, shrinks)."""
        if len(keys) <= 2:
            return [self.get(key) for key in keys]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(GET_CONCURRENCY, len(keys))) as pool:
            return list(pool.map(self.get, keys))

    def list(self, prefix: str, *, start_after: str | None = None) -> Iterator[Listed]:
        """Every key under `prefix` in key order (one request per 1,000 keys)."""
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": prefix}
            if token:
                kwargs["ContinuationToken"] = token
            elif start_after:
                kwargs["StartAfter"] = start_after
            page = self._retrying(f"LIST {prefix}", lambda kwargs=kwargs: self.client.list_objects_v2(**kwargs))
            for item in page.get("Contents", ()):
                yield Listed(item["Key"], item["LastModified"].timestamp(), int(item.get("Size", 0)))
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return

    def exists(self, key: str) -> bool:
        """Whether `key` exists (one LIST request: a HEAD's 404 has no body to tell a missing bucket from a missing
        key; the key itself sorts first among the keys it prefixes)."""
        page = self._retrying(
            f"LIST {key}", lambda: self.client.list_objects_v2(Bucket=self.bucket, Prefix=key, MaxKeys=1)
        )
        return any(item["Key"] == key for item in page.get("Contents", ()))

    def exists_under(self, prefix: str) -> bool:
        """Whether any key starts with `prefix` (one request)."""
        page = self._retrying(
            f"LIST {prefix}", lambda: self.client.list_objects_v2(Bucket=self.bucket, Prefix=prefix, MaxKeys=1)
        )
        return bool(page.get("Contents"))

    def check_bucket(self) -> None:
        """Raise the clean error for a missing bucket, refused credentials or an unreachable endpoint."""
        self._retrying("LIST", lambda: self.client.list_objects_v2(Bucket=self.bucket, MaxKeys=1))

    # -- writes ---------------------------------------------------------------------------------------
    def put(self, key: str, data: bytes) -> None:
        """An unconditional PUT (readable views: the last writer wins, the commits are the truth)."""
        self._retrying(f"PUT {key}", lambda: self.client.put_object(Bucket=self.bucket, Key=key, Body=data))

    def put_new(self, key: str, data: bytes) -> str:
        """Create `key` holding `data` with If-None-Match: * and return its ETag. Raises KeyTaken when the key
        holds other bytes (a lost race, or a deleted key's successor); a PUT whose outcome is unknown is resolved
        by reading the key back."""
        return self._conditional_put(key, data, {"IfNoneMatch": "*"})

    def put_if_match(self, key: str, data: bytes, etag: str) -> str:
        """Replace `key` only if it still has `etag`; KeyTaken when it changed (or was deleted)."""
        return self._conditional_put(key, data, {"IfMatch": etag})

    def _conditional_put(self, key: str, data: bytes, condition: dict[str, str]) -> str:
        what = f"PUT {key}"
        unknown = False  # an earlier attempt may have landed
        for attempt in range(len(self.retry_delays) + 1):
            if unknown:
                held = self.get(key)
                if held is not None and held[0] == data:
                    return held[1]  # the earlier attempt landed
                if held is not None and "IfNoneMatch" in condition:
                    raise KeyTaken(what)
                # missing (or an If-Match target with other bytes): the earlier attempt did not land; try again
            try:
                response = self.client.put_object(Bucket=self.bucket, Key=key, Body=data, **condition)
                return response.get("ETag", "")
            except Exception as exc:
                kind, error = self._classify(exc, what)
                if kind == "conflict":
                    if not unknown and _error_code(exc) not in ("ConditionalRequestConflict", "409"):
                        raise KeyTaken(what) from exc
                    # after an unknown outcome our own write may be what the condition sees; a 409 means two
                    # conditional writes raced: either way read back before deciding
                    held = self.get(key)
                    if held is not None and held[0] == data:
                        return held[1]
                    if held is None and "IfNoneMatch" in condition and attempt < len(self.retry_delays):
                        self._sleep(self.retry_delays[attempt])
                        continue
                    raise KeyTaken(what) from exc
                if kind == "missing" and "IfMatch" in condition:  # AWS answers If-Match on a missing key with 404
                    raise KeyTaken(what) from exc
                if kind == "transient" and attempt < len(self.retry_delays):
                    unknown = True
                    self._sleep(self.retry_delays[attempt])
                    continue
                if error is None:
                    raise
                raise error from exc
        raise AssertionError("unreachable")

    def delete(self, key: str, *, if_match: str | None = None) -> bool:
        """Delete `key` (only if it still has `if_match`); False when a condition failed. With `if_match`, a
        missing key is a failed condition on every server (SeaweedFS answers 412, moto and AWS 404)."""
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Key": key}
        if if_match:
            kwargs["IfMatch"] = if_match
        try:
            answer = self._retrying(f"DELETE {key}", lambda: self.client.delete_object(**kwargs), missing_ok=True)
        except KeyTaken:
            return False
        return answer is not None or not if_match

    def delete_many(self, keys: list[str]) -> None:
        """Delete keys, up to 1,000 per request (missing keys are fine)."""
        for start in range(0, len(keys), 1000):
            batch = {"Objects": [{"Key": key} for key in keys[start : start + 1000]], "Quiet": True}
            response = self._retrying(
                "DELETE objects", lambda batch=batch: self.client.delete_objects(Bucket=self.bucket, Delete=batch)
            )
            errors = [e for e in (response or {}).get("Errors", ()) if e.get("Code") != "NoSuchKey"]
            if errors:
                first = errors[0]
                raise self.failed(f"DELETE {first.get('Key')}", first.get("Code"))
