"""Sessions kept in memory: the same commit semantics without a disk (tests and the benchmark baseline)."""

from __future__ import annotations

import copy
import json
import os
import socket
import threading
from typing import Any

import strands_durable.store.events as event_kinds
from strands_durable.crashpoints import CrashPoints
from strands_durable.errors import SessionInUse, SessionNotFound
from strands_durable.store.base import LeaseHolder, Session, SessionStore, SessionSummary
from strands_durable.store.ids import new_session_meta
from strands_durable.store.journal import HEADER_KIND, utc_now
from strands_durable.store.state import SCHEMA_VERSION, SessionState, apply_record, compact_events, fold

__all__ = ["MemorySession", "MemoryStore"]


class MemorySession(Session):
    def __init__(self, store: MemoryStore, session_id: str, crash_points: CrashPoints | None) -> None:
        self.store = store
        self.state = fold(store.records[session_id])
        self.warnings: list[str] = []
        self._crash = crash_points or CrashPoints()
        self._closed = False

    def commit(
        self,
        events: list[dict[str, Any]],
        *,
        path: str = "",
        durable: bool = True,
        synced: bool = False,
        wait: bool = True,
    ) -> int:
        self._emit_commit(self._crash, "store.before_commit", path, events, durable=durable, synced=synced)
        with self.store._lock:
            events = compact_events(self.state, events)
            record: dict[str, Any] = {"seq": self.state.seq + 1, "at": utc_now(), "events": events}
            if synced:
                record["synced"] = True
            record = json.loads(json.dumps(record))  # what a reader of the record gets, never the caller's objects
            self.store.records[self.session_id].append(record)
            apply_record(self.state, record)
        self._emit_commit(
            self._crash, "store.after_commit", path, events, durable=durable, synced=synced, seq=int(record["seq"])
        )
        return int(record["seq"])

    def spec_snapshot(self) -> bytes:
        return self.store.snapshots[self.session_id]

    def abandon(self) -> None:
        self._release()

    def close(self) -> None:
        if not self._closed:
            self.commit([], path="close", synced=True)
        self._release()

    def _release(self) -> None:
        if not self._closed:
            self._closed = True
            self.store.leases.discard(self.session_id)


class MemoryStore(SessionStore):
    def __init__(self) -> None:
        self.records: dict[str, list[dict[str, Any]]] = {}
        self.snapshots: dict[str, bytes] = {}
        self.leases: set[str] = set()
        self._lock = threading.RLock()
        self._holder = LeaseHolder(os.getpid(), socket.gethostname())

    def _lease(self, session_id: str) -> None:
        with self._lock:
            if session_id in self.leases:
                raise SessionInUse(session_id, self._holder.pid, self._holder.host)
            self.leases.add(session_id)

    def create(
        self,
        meta: dict[str, Any],
        spec_snapshot: bytes,
        *,
        crash_points: CrashPoints | None = None,
        session_id: str | None = None,
    ) -> MemorySession:
        with self._lock:
            meta = new_session_meta(copy.deepcopy(meta), session_id, self.records)
            session_id = meta["session_id"]
            self.records[session_id] = [
                {
                    "seq": 0,
                    "at": utc_now(),
                    "kind": HEADER_KIND,
                    "schema": SCHEMA_VERSION,
                    "events": [event_kinds.session(meta), event_kinds.status("running")],
                }
            ]
            self.snapshots[session_id] = spec_snapshot
            self._lease(session_id)
        return MemorySession(self, session_id, crash_points)

    def open(self, session_id: str, *, crash_points: CrashPoints | None = None, check: bool = True) -> MemorySession:
        if session_id not in self.records:
            raise SessionNotFound(session_id)
        self._lease(session_id)
        return MemorySession(self, session_id, crash_points)

    def load(self, session_id: str) -> SessionState:
        with self._lock:
            if session_id not in self.records:
                raise SessionNotFound(session_id)
            return fold(self.records[session_id])

    def session_ids(self) -> list[str]:
        with self._lock:
            return list(self.records)

    def holder(self, session_id: str) -> LeaseHolder | None:
        if session_id not in self.records:
            raise SessionNotFound(session_id)
        return self._holder if session_id in self.leases else None

    def list(self) -> list[SessionSummary]:
        out = []
        for session_id in self.session_ids():
            state = self.load(session_id)
            out.append(
                SessionSummary(
                    session_id=session_id,
                    workflow_name=str(state.meta.get("workflow_name")),
                    pattern=str(state.meta.get("pattern")),
                    status=state.status,
                    stale=state.status == "running" and session_id not in self.leases,
                    reason=state.reason,
                    created_at=state.meta.get("created_at"),
                    updated_at=state.updated_at,
                    spec_path=state.meta.get("spec_path"),
                )
            )
        return sorted(out, key=lambda s: s.updated_at or "", reverse=True)

    def delete(self, session_id: str) -> None:
        with self._lock:
            if session_id not in self.records:
                raise SessionNotFound(session_id)
            self._lease(session_id)
            del self.records[session_id]
            self.snapshots.pop(session_id, None)
            self.leases.discard(session_id)
