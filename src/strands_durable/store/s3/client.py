"""The S3 client layer: a boto3 client with botocore's retries off, and `Objects`, the few operations the store
needs with our own retries, conditional writes resolved by reading back, and S3 errors turned into ours.

botocore's retries are off everywhere: a conditional PUT retried by botocore after its first attempt landed would
see its own 412 and report a lost race. Our retry reads the key first: the PUT whose outcome is unknown (a timeout,
a reset connection, a 5xx) is resolved by what the key holds, never guessed.

Every operation (a read, a list page, a write with the read-backs that settle it) has one deadline,
STRANDS_S3_DEADLINE seconds (default 60) from its start, shared by everything it does: a stalled server costs
that long, not retries times read-backs times timeouts. While one waits, a first Ctrl+C stops the run at once
(`network_waits`). An endpoint that does not answer as S3 (a web server's 404, a redirect) is exit 12 naming it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from strands_durable import network_waits
from strands_durable.errors import (
    S3AccessDenied,
    S3BucketMissing,
    S3DeadlineExceeded,
    S3EndpointNotS3,
    S3EndpointUnreachable,
    StorageIOError,
    UsageError,
)
from strands_durable.store.s3.cache import IMMUTABLE_OBJECTS, ObjectCache

GET_CONCURRENCY = 8
RETRY_DELAYS_S = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)
DEADLINE_ENV = "STRANDS_S3_DEADLINE"
DEFAULT_DEADLINE_S = 60.0
READ_TIMEOUT_S = 20.0  # one request's wait for an answer (at most the deadline)
CONNECT_TIMEOUT_S = 5.0


def deadline_from_env() -> float:
    """STRANDS_S3_DEADLINE in seconds (default 60); UsageError (exit 2) naming the variable when it is not a
    positive number."""
    raw = os.environ.get(DEADLINE_ENV, "").strip()
    if not raw:
        return DEFAULT_DEADLINE_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise UsageError(f"{DEADLINE_ENV}: not a positive number of seconds: {raw!r}")
    return value


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
    deadline = deadline_from_env()
    session = session if session is not None else boto3.session.Session()
    config = Config(
        retries={"total_max_attempts": 1, "mode": "standard"},  # one attempt: `max_attempts` counts retries
        s3={"addressing_style": "path"} if endpoint else {},
        connect_timeout=min(CONNECT_TIMEOUT_S, deadline),
        read_timeout=min(READ_TIMEOUT_S, deadline),
        signature_version="s3v4",
    )
    client = session.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=access_key,
        aws_secret_access_key=secret_key,
        region_name=region or session.region_name or "us-east-1",
        config=config,
    )
    if endpoint:
        # botocore follows a redirect by asking the bucket's region with a HEAD, which a server that is not S3
        # redirects again, without end (a RecursionError); a given endpoint has no other region to go to
        client.meta.events.register("before-call.s3", _no_region_redirects)
    return client


def _no_region_redirects(context: dict[str, Any], **_: Any) -> None:
    context.setdefault("s3_redirect", {})["redirected"] = True


_current = threading.local()  # the deadline of the operation this thread is in (nested calls share it)


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
    etag: str = ""


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


def _not_s3(exc: BaseException) -> int | None:
    """The HTTP status of an answer that S3 would not give: a redirect (a given endpoint has no other region), or
    a 4xx whose body names no S3 error (a web server's page). None for anything S3 may answer."""
    response = getattr(exc, "response", None)
    status = _status(exc)
    if not isinstance(response, dict) or status is None:
        return None
    code = response.get("Error", {}).get("Code")
    if code == str(status):  # botocore's stand-in when the body is no S3 error document (an HTML error page)
        code = None
    if 300 <= status < 400 or (not code and 400 <= status < 500 and status != 403):
        return status
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
        deadline_s: float | None = None,
        cache: ObjectCache | None = IMMUTABLE_OBJECTS,
    ) -> None:
        """`deadline_s`: how long one operation may take in all (default STRANDS_S3_DEADLINE, else 60 s).
        `cache`: where the bytes of immutable objects are remembered (store/s3/cache.py; None: nowhere)."""
        self.client = client
        self.cache = cache
        self.bucket = bucket
        self.endpoint = endpoint_of(client)
        self.retry_delays = retry_delays
        self.deadline_s = deadline_s if deadline_s is not None else deadline_from_env()
        self._sleep = sleep

    # -- the deadline ---------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _operation(self, what: str) -> Iterator[None]:
        """One operation's deadline, shared by the calls it makes (a conditional PUT's read-backs), and its wait
        registered as one on the network (a first Ctrl+C then stops the run at once)."""
        if getattr(_current, "deadline", None) is not None:
            yield
            return
        _current.deadline = time.monotonic() + self.deadline_s
        try:
            with network_waits.waiting_on(f"S3 at {self.endpoint} ({what})"):
                yield
        finally:
            _current.deadline = None

    def _left(self, what: str) -> float:
        """Seconds left of the operation's deadline; S3DeadlineExceeded (exit 12) once none are."""
        left = _current.deadline - time.monotonic()
        if left <= 0:
            raise S3DeadlineExceeded(what, self.endpoint, self.bucket, self.deadline_s)
        return left

    def _pause(self, what: str, delay: float) -> None:
        self._sleep(min(delay, self._left(what)))
        self._left(what)

    # -- error handling -------------------------------------------------------------------------------
    def failed(self, what: str, cause: object, *, verb: str = "failed") -> StorageIOError:
        return StorageIOError(f"S3 {what} {verb} at {self.endpoint} (bucket {self.bucket}): {cause}")

    def _classify(self, exc: BaseException, what: str) -> tuple[str, BaseException | None]:
        """('conflict' | 'missing' | 'transient' | 'fatal', the error to raise when fatal or out of retries)."""
        from botocore import exceptions as bx

        code = _error_code(exc)
        status = _status(exc)
        if isinstance(exc, bx.ClientError):
            foreign = _not_s3(exc)
            if foreign is not None:
                return "fatal", S3EndpointNotS3(self.endpoint, self.bucket, what, foreign)
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
        """`call()` retried on transient errors (for idempotent requests: reads, lists, deletes, plain PUTs),
        within the operation's deadline."""
        with self._operation(what):
            for attempt in range(len(self.retry_delays) + 1):
                self._left(what)
                try:
                    return call()
                except Exception as exc:
                    kind, error = self._classify(exc, what)
                    if kind == "missing" and missing_ok:
                        return None
                    if kind == "transient" and attempt < len(self.retry_delays):
                        self._pause(what, self.retry_delays[attempt])
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

    def get_immutable(self, listed: list[Listed], *, fresh: bool = False) -> list[tuple[bytes, str] | None]:
        """`get_many` of listed immutable objects (commits, checkpoints): each one this process has seen under the
        ETag its listing shows is served from the cache, the others are fetched (and remembered). `fresh`: all
        fetched."""
        cache, scope = (None if fresh else self.cache), self._scope()
        found: list[tuple[bytes, str] | None] = []
        missing: list[int] = []
        for index, item in enumerate(listed):
            data = cache.get(scope, item.key, item.etag) if cache is not None else None
            found.append(None if data is None else (data, item.etag))
            if data is None:
                missing.append(index)
        for index, held in zip(missing, self.get_many([listed[i].key for i in missing]), strict=True):
            found[index] = held
            if held is not None:
                self.remember(listed[index].key, held[1], held[0])
        return found

    def put_immutable(self, key: str, data: bytes) -> str:
        """`put_new` of an object never overwritten (a commit, a checkpoint), its bytes remembered under the ETag
        returned, so this process reads it back from the cache."""
        etag = self.put_new(key, data)
        self.remember(key, etag, data)
        return etag

    def remember(self, key: str, etag: str, data: bytes) -> None:
        """Keep the bytes of the immutable object `key` (just written or read, with its ETag)."""
        if self.cache is not None:
            self.cache.remember(self._scope(), key, etag, data)

    def _scope(self) -> str:
        return f"{self.endpoint} {self.bucket}"

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
                size = int(item.get("Size", 0))
                yield Listed(item["Key"], item["LastModified"].timestamp(), size, str(item.get("ETag", "")))
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
        with self._operation(what):
            return self._conditional_put_within_deadline(what, key, data, condition)

    def _conditional_put_within_deadline(self, what: str, key: str, data: bytes, condition: dict[str, str]) -> str:
        unknown = False  # an earlier attempt may have landed
        for attempt in range(len(self.retry_delays) + 1):
            self._left(what)
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
                        self._pause(what, self.retry_delays[attempt])
                        continue
                    raise KeyTaken(what) from exc
                if kind == "missing" and "IfMatch" in condition:  # AWS answers If-Match on a missing key with 404
                    raise KeyTaken(what) from exc
                if kind == "transient" and attempt < len(self.retry_delays):
                    unknown = True
                    self._pause(what, self.retry_delays[attempt])
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
