"""The bytes of a session's immutable objects (commit records and checkpoints), remembered by this process under
their key and ETag, so that reading a session again costs its LIST and the GETs of objects not seen before.

Commit and checkpoint objects are created with If-None-Match: * and never overwritten (store/s3/session.py). A
key may be deleted (compaction, delete) and, rarely, created again with other bytes; its ETag then differs (the
MD5 of the bytes on every server we test, else an id of the upload), so an entry is used only when the LIST that
names the key shows the very ETag it was remembered under. Leases and views are never remembered. A strict
writer's read-back fetches every object (its check is about what the bucket holds).

One cache per process, shared by its stores (the chaos kit makes a store per call), bounded by bytes (least
recently used first out); a forked child starts with the parent's entries and a fresh lock.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

DEFAULT_LIMIT_BYTES = 64 << 20


def plain_etag(etag: str) -> str:
    """An ETag as LIST and PUT answers compare: without its quotes."""
    return etag.strip().strip('"')


class ObjectCache:
    """(scope, key, ETag) -> bytes, at most `limit_bytes` of them."""

    def __init__(self, limit_bytes: int = DEFAULT_LIMIT_BYTES) -> None:
        self.limit_bytes = limit_bytes
        self._entries: OrderedDict[tuple[str, str, str], bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, scope: str, key: str, etag: str) -> bytes | None:
        if not etag:
            return None
        entry = (scope, key, plain_etag(etag))
        with self._lock:
            data = self._entries.get(entry)
            if data is not None:
                self._entries.move_to_end(entry)
            return data

    def remember(self, scope: str, key: str, etag: str, data: bytes) -> None:
        if not etag or len(data) > self.limit_bytes // 4:
            return
        entry = (scope, key, plain_etag(etag))
        with self._lock:
            if entry in self._entries:
                return
            self._entries[entry] = data
            self._size += len(data)
            while self._size > self.limit_bytes:
                _, dropped = self._entries.popitem(last=False)
                self._size -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._size = 0

    def _after_fork(self) -> None:
        self._lock = threading.Lock()  # a thread of the parent may have held it at the fork


IMMUTABLE_OBJECTS = ObjectCache()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=IMMUTABLE_OBJECTS._after_fork)
