"""The per-session lease on S3: one object taken and renewed with If-Match on its ETag, with an expiry.

A holder renews it from a background thread every TTL/3 (so long model and tool calls keep it), and renews it
itself before a commit when its own clock says it expired. A taker treats a lease as dead only when the taker's
clock is past the recorded expiry plus the skew tolerance: clocks may differ by up to `skew_s` without two holders
believing they hold it. Safety never rests on the clocks alone: a taker fences the previous holder's commits (see
session.py).

A unit lease (one unit of a run, `attempt` set) also orders its holders by attempt number, which the engine that
schedules the unit (Temporal) hands out: a higher attempt takes the lease from a lower one at once, live or not,
and a lower attempt never takes it from a higher one (SessionFenced).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from strands_durable.errors import CorruptSession, SessionFenced, SessionInUse, StorageIOError
from strands_durable.store.s3.client import KeyTaken, Objects

DEFAULT_TTL_S = 30.0
DEFAULT_SKEW_S = 5.0


_TAKE_ATTEMPTS = 8  # a unit lease raced by other attempts is read and decided again this many times


@dataclass(frozen=True)
class LeaseRecord:
    token: str
    pid: int
    host: str
    expires_at: float
    attempt: int | None = None  # a unit lease: the holder's attempt number

    def encode(self) -> bytes:
        record = {"token": self.token, "pid": self.pid, "host": self.host, "expires_at": self.expires_at}
        if self.attempt is not None:
            record["attempt"] = self.attempt
        return json.dumps(record).encode()

    @classmethod
    def decode(cls, data: bytes, where: str) -> LeaseRecord:
        try:
            raw = json.loads(data)
            attempt = raw.get("attempt")
            return cls(
                str(raw["token"]),
                int(raw["pid"]),
                str(raw["host"]),
                float(raw["expires_at"]),
                None if attempt is None else int(attempt),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CorruptSession(where, f"not a lease record: {exc}") from exc


class S3Lease:
    """One process's hold on one session (or, with `attempt`, on one unit of it). `acquire` returns the token of
    the holder it took over (None when the lease was free); `ensure` raises SessionFenced once another holds it."""

    def __init__(
        self,
        objects: Objects,
        key: str,
        session_id: str,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        skew_s: float = DEFAULT_SKEW_S,
        clock: Callable[[], float] = time.time,
        attempt: int | None = None,
        what: str | None = None,
    ) -> None:
        self.objects = objects
        self.attempt = attempt
        self.what = what or f"session {session_id}"  # how errors name what is leased
        self.key = key
        self.session_id = session_id
        self.ttl_s = ttl_s
        self.skew_s = skew_s
        self.token = uuid.uuid4().hex
        self._clock = clock
        self._etag: str | None = None
        self._expires_at = 0.0
        self._lost: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _record(self) -> LeaseRecord:
        return LeaseRecord(self.token, os.getpid(), socket.gethostname(), self._clock() + self.ttl_s, self.attempt)

    def current(self) -> tuple[LeaseRecord, str] | None:
        held = self.objects.get(self.key)
        if held is None:
            return None
        return LeaseRecord.decode(held[0], f"s3://{self.objects.bucket}/{self.key}"), held[1]

    def acquire(self, *, renew_in_background: bool = True) -> str | None:
        """Take the lease: first as a free one (one conditional PUT, If-None-Match: *), and only when that finds the
        key taken, by reading the holder's record and deciding (`_take`). Returns the token of the holder it took
        over (None when it was free)."""
        record = self._record()
        try:
            etag, previous = self.objects.put_new(self.key, record.encode()), None
        except KeyTaken:
            etag, previous, record = self._take()
        self._etag, self._expires_at = etag, record.expires_at
        if renew_in_background:
            self._thread = threading.Thread(target=self._renew_loop, name=f"lease-{self.session_id[:8]}", daemon=True)
            self._thread.start()
        return previous

    def _take(self) -> tuple[str, str | None, LeaseRecord]:
        """The lease, held by another record when last seen: (our ETag, the replaced token, our record)."""
        for _attempt in range(_TAKE_ATTEMPTS if self.attempt is not None else 1):
            held = self.current()
            record = self._record()
            try:
                if held is None:
                    etag = self.objects.put_new(self.key, record.encode())
                    previous = None
                else:
                    holder, etag_seen = held
                    self._check_takeover(holder)
                    etag = self.objects.put_if_match(self.key, record.encode(), etag_seen)
                    previous = holder.token
                break
            except KeyTaken:  # another process took it between our read and our write
                if self.attempt is not None:
                    continue  # a unit lease: decide again against whoever holds it now
                now_held = self.current()
                holder = now_held[0] if now_held else LeaseRecord("", 0, "unknown", 0.0)
                raise SessionInUse(self.session_id, holder.pid, holder.host) from None
        else:
            raise SessionInUse(self.session_id, 0, f"unknown (the lease of {self.what} kept changing)")
        return etag, previous, record

    def _check_takeover(self, holder: LeaseRecord) -> None:
        """Return if we may replace `holder`'s lease: it expired, or (unit leases) ours is a later attempt.
        SessionInUse while it is live; SessionFenced when a later attempt holds a unit lease (we are stale)."""
        if self.attempt is not None and holder.attempt is not None:
            if holder.attempt > self.attempt:
                raise SessionFenced(
                    self.session_id,
                    f"attempt {holder.attempt} of {self.what} runs on pid {holder.pid} on host {holder.host}; "
                    f"this was attempt {self.attempt}",
                )
            if holder.attempt < self.attempt:
                return  # the engine retried the unit: the earlier attempt is dead or a zombie, fenced at once
        now = self._clock()
        if now <= holder.expires_at + self.skew_s:
            raise SessionInUse(
                self.session_id, holder.pid, holder.host, free_at=holder.expires_at + self.skew_s, now=now
            )

    def renew(self) -> None:
        """Extend the lease (If-Match on our ETag). A refused renewal means another process took it over."""
        with self._lock:
            if self._lost or self._etag is None:
                return
            record = self._record()
            try:
                self._etag = self.objects.put_if_match(self.key, record.encode(), self._etag)
                self._expires_at = record.expires_at
            except KeyTaken:
                now_held = self.current()
                who = f"pid {now_held[0].pid} on host {now_held[0].host}" if now_held else "nobody (released)"
                self._lost = f"the lease is now held by {who}"

    def ensure(self) -> None:
        """Before a commit: raise SessionFenced if the lease is lost; renew it first if our own clock says it
        expired (a process paused past its lease learns here whether someone took over)."""
        if self._lost is None and self._clock() >= self._expires_at - self.ttl_s / 3:
            self.renew()
        if self._lost is not None:
            raise SessionFenced(self.session_id, self._lost)

    @property
    def lost(self) -> str | None:
        return self._lost

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.ttl_s / 3):
            try:
                self.renew()
            except StorageIOError:
                continue  # the endpoint may come back before the lease expires; commits check for themselves
            if self._lost:
                return

    def stop_renewing(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self._thread = None

    def release(self) -> None:
        """Stop renewing and delete the lease object if it is still ours (If-Match)."""
        self.stop_renewing()
        with self._lock:
            if self._etag is not None and self._lost is None:
                self.objects.delete(self.key, if_match=self._etag)
            self._etag = None
