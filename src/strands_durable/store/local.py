"""Sessions on the local file system: a checksummed journal is the commit record, readable files derive from it.

Layout of `<root>/session_<uuid>/`: journal.log (the truth), session.json, pattern_state.json,
spec_snapshot.yaml, agents/<key>/agent.json, agents/<key>/messages/message_<N>.json, lease.json, lease.lock,
backups/<timestamp>/ (never read as data). See docs/storage.md for why a journal and how recovery works.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import CrashPoints
from strands_durable.errors import CorruptSession, SessionNotFound, StorageIOError, UsageError
from strands_durable.store import layout
from strands_durable.store.base import Session, SessionStore, SessionSummary
from strands_durable.store.fileops import FileOps, is_temp_file
from strands_durable.store.journal import HEADER_KIND, JOURNAL_NAME, encode_record, read_journal
from strands_durable.store.lease import Lease, live_holder
from strands_durable.store.state import (
    SCHEMA_VERSION,
    SessionState,
    apply_record,
    compact_events,
    copy_state,
    fold,
)
from strands_durable.store.views import agent_view, dump, dump_compact, message_view, pattern_state_view, session_view

# events whose commit refreshes the readable files at once; a unit's progress refreshes them at most every
# VIEW_INTERVAL_S (they may lag the journal, never lead it); close always brings them up to date
_FLUSH_KINDS = frozenset({"session", "status", "artifact", "variables", "generation"})
_PROGRESS_KINDS = frozenset({"unit", "pattern_state"})
VIEW_INTERVAL_S = 0.5


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _io_error(exc: OSError, what: str) -> StorageIOError:
    reason = os.strerror(exc.errno) if exc.errno else str(exc)
    return StorageIOError(f"{what}: {reason}")


class LocalSession(Session):
    def __init__(
        self,
        store: LocalStore,
        directory: Path,
        state: SessionState,
        lease: Lease,
        crash_points: CrashPoints | None,
    ) -> None:
        self.store = store
        self.directory = directory
        self.state = state
        self.warnings: list[str] = []
        self._lease = lease
        self._ops = store.fileops
        self._crash = crash_points or CrashPoints()
        self._journal_path = directory / JOURNAL_NAME
        self._appender = self._ops.open_append(self._journal_path)
        self._journal_size = self._journal_path.stat().st_size
        self._written_messages: dict[str, int] = {}
        self._written_generation: dict[str, int] = {}
        self._broken: str | None = None
        self._closed = False
        self._lock = threading.RLock()  # concurrent units (tasks, branches, workers) commit from threads
        self._flushed_at = 0.0

    # -- commits ------------------------------------------------------------------------------------
    def commit(
        self, events: list[dict[str, Any]], *, path: str = "", durable: bool = True, synced: bool = False
    ) -> None:
        with self._lock:
            self._commit(events, path=path, durable=durable, synced=synced)

    def _commit(self, events: list[dict[str, Any]], *, path: str, durable: bool, synced: bool) -> None:
        if self._broken:
            raise StorageIOError(f"session {self.state.session_id} cannot commit after an I/O failure: {self._broken}")
        events = compact_events(self.state, events)
        record: dict[str, Any] = {"seq": self.state.seq + 1, "at": utc_now(), "events": events}
        if synced:
            record["synced"] = True
        data = encode_record(record)
        self._crash.emit("store.before_commit", path)
        try:
            self._appender.append(data)
            if durable:
                self._appender.sync()
        except OSError as exc:
            self._undo_partial_append(exc)
            raise _io_error(exc, f"cannot write {self._journal_path}") from exc
        self._journal_size += len(data)
        # fold what was written, not the caller's objects: the state never aliases a structure the runner may
        # still change, and in memory is exactly what a reader of the journal gets
        apply_record(self.state, json.loads(data[9:]))
        if self.store.strict:
            self._check_histories(events)
        kinds = {event.get("type") for event in events}
        if kinds & _FLUSH_KINDS or (kinds & _PROGRESS_KINDS and time.monotonic() - self._flushed_at >= VIEW_INTERVAL_S):
            self.flush_views()
        self._crash.emit("store.after_commit", path)

    def _undo_partial_append(self, exc: OSError) -> None:
        """Cut a failed append back to the last whole record so the journal never holds garbage mid-file."""
        try:
            self._ops.truncate(self._journal_path, self._journal_size)
        except OSError:
            self._broken = os.strerror(exc.errno) if exc.errno else str(exc)
            return
        if exc.errno in (errno.EIO,):  # after a failed fsync the page cache cannot be trusted
            self._broken = os.strerror(exc.errno)

    def _check_histories(self, events: list[dict[str, Any]]) -> None:
        from strands_durable.history import validate

        for key in {e["conv"] for e in events if e.get("type") in ("message", "generation")}:
            violations = validate(self.state.conversations[key].messages, mode="stored")
            if violations:
                raise AssertionError(f"strict store: invalid stored history for {key}: {violations[0]}")

    # -- readable files -----------------------------------------------------------------------------
    def flush_views(self, *, messages: bool = True) -> None:
        """Write the readable files that changed since the last flush, without fsync: the journal is the truth,
        and after a crash any file newer than the last sync mark is re-derived from it. Message files are new
        files written once (no temp file needed: a torn one is detected against the journal); the files that
        are rewritten (agent.json, pattern_state.json, session.json) are replaced atomically. `messages=False`
        writes only session.json and pattern_state.json."""
        state = self.state
        ops = self._ops
        self._flushed_at = time.monotonic()
        try:
            for key, conv in state.conversations.items() if messages else ():
                agent_dir = self.directory / layout.AGENTS_DIR / layout.safe_key(key)
                messages_dir = agent_dir / "messages"
                written = self._written_messages.get(key)
                if written is None:
                    ops.makedirs(messages_dir, durable=False)
                    written = 0
                if self._written_generation.get(key, 0) != conv.generation:
                    self._backup_messages(key, messages_dir)
                    written = 0
                if written == len(conv.messages):
                    continue
                for index in range(written, len(conv.messages)):
                    target = messages_dir / layout.message_file_name(index)
                    ops.write_file(target, dump_compact(message_view(conv, index)), sync=False)
                ops.write_atomic(agent_dir / "agent.json", dump_compact(agent_view(conv)), durable=False)
                self._written_messages[key] = len(conv.messages)
                self._written_generation[key] = conv.generation
            ops.write_atomic(
                self.directory / layout.PATTERN_STATE_JSON, dump_compact(pattern_state_view(state)), durable=False
            )
            ops.write_atomic(self.directory / layout.SESSION_JSON, dump(session_view(state)), durable=False)
        except OSError as exc:
            raise _io_error(exc, f"cannot write the readable files of session {state.session_id}") from exc

    def _backup_messages(self, key: str, messages_dir: Path) -> None:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        target = self.directory / layout.BACKUPS_DIR / stamp / layout.AGENTS_DIR / key
        self._ops.makedirs(target)
        self._ops.rename(messages_dir, target / "messages")
        self._ops.fsync_dir(target)
        self._ops.mkdir(messages_dir)
        self._ops.fsync_dir(messages_dir.parent)

    def mark_intact_message_files(self) -> None:
        """After a crash: count the message files already on disk with the right bytes as written, so only the
        missing or damaged ones are written again (re-deriving a long session would otherwise rewrite them all)."""
        try:
            on_disk_keys = set(os.listdir(self.directory / layout.AGENTS_DIR))
        except FileNotFoundError:
            return
        for key, conv in self.state.conversations.items():
            if conv.generation or key not in on_disk_keys:
                continue  # written from scratch (a repaired history's old files go to backups first)
            messages_dir = self.directory / layout.AGENTS_DIR / key / "messages"
            if not messages_dir.is_dir():
                continue
            intact = 0
            for index in range(len(conv.messages)):
                try:
                    on_disk = (messages_dir / layout.message_file_name(index)).read_bytes()
                except OSError:
                    break
                if on_disk != dump_compact(message_view(conv, index)):
                    break
                intact += 1
            self._written_messages[key] = intact
            self._written_generation[key] = conv.generation

    def defer_views(self) -> None:
        """Count the readable files as flushed now, so the next flush waits for the usual interval."""
        self._flushed_at = time.monotonic()

    def mark_views_written(self) -> None:
        for key, conv in self.state.conversations.items():
            self._written_messages[key] = len(conv.messages)
            self._written_generation[key] = conv.generation

    def rewrite_views(self) -> None:
        """Write every readable file again from the journal (`sessions repair` of damaged or missing files)."""
        with self._lock:
            self._written_messages.clear()
            self.flush_views()

    # -- lifecycle ----------------------------------------------------------------------------------
    def spec_snapshot(self) -> bytes:
        return self._ops.read_bytes(self.directory / layout.SPEC_SNAPSHOT)

    def abandon(self) -> None:
        """Drop the session as a crashed process would: no flush, no final record, the lease released."""
        self._closed = True
        self._appender.close()
        self._lease.release()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if not self._broken:
                self.flush_views()
                self._ops.sync_all()
                self.commit([], path="close", synced=True)
        finally:
            self._appender.close()
            self._lease.release()


@dataclass(frozen=True)
class KnownJournal:
    """Journal bytes this process has already read as `open` would: `state` is the fold of exactly `data` (whole
    records) and each of its conversations is valid as stored.

    A store given one reads a journal at `path` that begins with these very bytes by decoding, folding and
    validating only the records after them, onto a copy-on-write copy of `state`. The result is the one a new
    process would get (the fold is a function of the bytes, and the bytes are compared, not assumed); it lets the
    chaos explorer resume hundreds of runs from one journal prefix without paying for the prefix each time.
    """

    path: Path
    data: bytes
    state: SessionState


class LocalStore(SessionStore):
    def __init__(
        self,
        root: Path | str | None = None,
        *,
        fileops: FileOps | None = None,
        strict: bool | None = None,
        known_journal: KnownJournal | None = None,
    ) -> None:
        """`strict` validates every conversation a commit touches (`mode="stored"`); it defaults to the
        environment variable STRANDS_DURABLE_STRICT (the test suite turns it on). `known_journal`: see
        `KnownJournal`."""
        self.root = Path(root).expanduser() if root is not None else layout.default_sessions_dir()
        self.fileops = fileops or FileOps()
        self.strict = strict if strict is not None else os.environ.get("STRANDS_DURABLE_STRICT", "") not in ("", "0")
        self.known_journal = known_journal

    # -- creating and opening ------------------------------------------------------------------------
    def create(
        self, meta: dict[str, Any], spec_snapshot: bytes, *, crash_points: CrashPoints | None = None
    ) -> LocalSession:
        session_id = meta["session_id"]
        directory = layout.session_dir(self.root, session_id)
        ops = self.fileops
        try:
            ops.makedirs(self.root)
            ops.mkdir(directory)
            ops.fsync_dir(self.root)
        except OSError as exc:
            raise _io_error(exc, f"cannot create session directory {directory}") from exc
        lease = Lease(directory, session_id, ops).acquire()
        try:
            ops.write_atomic(directory / layout.SPEC_SNAPSHOT, spec_snapshot)
            header = {
                "seq": 0,
                "at": utc_now(),
                "kind": HEADER_KIND,
                "schema": SCHEMA_VERSION,
                "events": [{"type": "session", "meta": meta}, {"type": "status", "status": "running"}],
            }
            ops.write_atomic(directory / JOURNAL_NAME, encode_record(header))
            state = fold([header])
            session = LocalSession(self, directory, state, lease, crash_points)
            session.flush_views()
            return session
        except OSError as exc:
            lease.release()
            raise _io_error(exc, f"cannot create session {session_id}") from exc
        except BaseException:
            lease.release()
            raise

    def _directory(self, session_id: str) -> Path:
        directory = layout.session_dir(self.root, session_id)
        if not (directory / JOURNAL_NAME).is_file():
            raise SessionNotFound(session_id)
        return directory

    def _read(
        self, directory: Path, *, repair_tail: bool, upto_seq: int | None = None
    ) -> tuple[SessionState, SessionState | None]:
        """The journal's state (as of record `upto_seq`), and the known state it was folded onto (None: read from
        the first byte)."""
        path = directory / JOURNAL_NAME
        try:
            data = self.fileops.read_bytes(path)
        except OSError as exc:
            raise _io_error(exc, f"cannot read {path}") from exc
        known = self.known_journal
        if (
            known is not None
            and known.path == path
            and (upto_seq is None or upto_seq >= known.state.seq)
            and data.startswith(known.data)
        ):
            start, base = len(known.data), known.state
            contents = read_journal(path, data[start:], first_seq=base.seq + 1)
            state = copy_state(base)
        else:
            start, base = 0, None
            contents = read_journal(path, data)
            if not contents.records:
                raise CorruptSession(str(path), "no complete header record")
            state = SessionState()
        if contents.torn_tail and repair_tail:
            try:
                self.fileops.truncate(path, start + contents.valid_length)
            except OSError as exc:
                raise _io_error(exc, f"cannot truncate the torn tail of {path}") from exc
        records = contents.records
        if upto_seq is not None:
            records = records[: max(0, upto_seq - state.seq)]
        try:
            return fold(records, state), base
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptSession(str(path), f"a record does not apply: {exc}") from exc

    def open(self, session_id: str, *, crash_points: CrashPoints | None = None, check: bool = True) -> LocalSession:
        directory = self._directory(session_id)
        lease = Lease(directory, session_id, self.fileops).acquire()
        try:
            state, known = self._read(directory, repair_tail=True)
            clean = state.synced_seq == state.seq
            self._remove_temp_files(directory)
            if check:
                verify_views(directory, state, clean=clean)
                verify_histories(directory, state, known=known)
            session = LocalSession(self, directory, state, lease, crash_points)
            if clean:
                session.mark_views_written()
            else:
                session.mark_intact_message_files()
            edited = hand_edited_variables(directory, state)
            if edited is not None:
                session.warnings.append(
                    f"Using variables edited by hand in {directory / layout.SESSION_JSON}: {json.dumps(edited)}"
                )
                session.commit([{"type": "variables", "variables": edited, "source": "session.json"}])
            if not clean:
                # what the crash left behind is re-derived with the next throttled flush, a status change or
                # close (a long session need not rewrite its files before it can continue; they are derived)
                session.defer_views()
            return session
        except BaseException:
            lease.release()
            raise

    def _remove_temp_files(self, directory: Path) -> None:
        for root, _dirs, files in os.walk(directory):
            if layout.BACKUPS_DIR in Path(root).relative_to(directory).parts:
                continue
            for name in files:
                if is_temp_file(name):
                    with contextlib.suppress(FileNotFoundError):
                        self.fileops.remove(Path(root) / name)

    def load(self, session_id: str, *, upto_seq: int | None = None) -> SessionState:
        """The session's state; with `upto_seq`, as it was after that journal record."""
        return self._read(self._directory(session_id), repair_tail=False, upto_seq=upto_seq)[0]

    # -- listing and housekeeping ---------------------------------------------------------------------
    def session_ids(self) -> list[str]:
        try:
            names = os.listdir(self.root)
        except FileNotFoundError:
            return []
        ids = []
        for name in names:
            if name.startswith(layout.SESSION_PREFIX):
                candidate = name[len(layout.SESSION_PREFIX) :]
                valid = layout.is_session_id(candidate) or layout.is_named_session_id(candidate)
                if valid and (self.root / name / JOURNAL_NAME).is_file():
                    ids.append(candidate)
        return ids

    def list(self) -> list[SessionSummary]:
        summaries = []
        for session_id in self.session_ids():
            directory = self.root / f"{layout.SESSION_PREFIX}{session_id}"
            view = read_json_object(directory / layout.SESSION_JSON)
            if view is None or view.get("session_id") != session_id:
                try:
                    view = session_view(self._read(directory, repair_tail=False)[0])
                except CorruptSession:
                    continue
            status = view.get("status", "running")
            stale = status == "running" and live_holder(directory) is None
            summaries.append(
                SessionSummary(
                    session_id=session_id,
                    workflow_name=str(view.get("workflow_name")),
                    pattern=str(view.get("pattern")),
                    status=status,
                    stale=stale,
                    reason=view.get("status_reason"),
                    created_at=view.get("created_at"),
                    updated_at=view.get("updated_at"),
                    spec_path=view.get("spec_path"),
                )
            )
        summaries.sort(key=lambda s: s.updated_at or "", reverse=True)
        return summaries

    def holder(self, session_id: str):  # -> LeaseHolder | None
        return live_holder(self._directory(session_id))

    def directory_of(self, session_id: str) -> Path:
        return self._directory(session_id)

    def delete(self, session_id: str) -> None:
        directory = self._directory(session_id)
        lease = Lease(directory, session_id, self.fileops).acquire()
        try:
            # the journal goes first, so a crash midway leaves a directory that is no longer a session
            self.fileops.remove(directory / JOURNAL_NAME)
            self.fileops.fsync_dir(directory)
            self.fileops.remove_tree(directory)
        except OSError as exc:
            raise _io_error(exc, f"cannot delete {directory}") from exc
        finally:
            lease.release()

    def resolve(self, id_or_prefix: str) -> str:
        named = id_or_prefix.strip()
        if (
            layout.is_named_session_id(named)
            and not layout.is_session_id(named.lower())
            and named in self.session_ids()
        ):
            return named  # a caller-chosen id (an agent session): exact match only
        text = layout.check_id_prefix(id_or_prefix.strip().lower())
        if layout.is_session_id(text):
            self._directory(text)
            return text
        if len(text) < 8:
            raise UsageError(f"Session id prefix too short: {id_or_prefix} (give at least 8 characters)")
        matches = [sid for sid in self.session_ids() if sid.startswith(text)]
        if not matches:
            raise SessionNotFound(id_or_prefix)
        if len(matches) > 1:
            raise UsageError(f"Ambiguous session id prefix {id_or_prefix}: matches {len(matches)} sessions")
        return matches[0]


def read_json_object(path: Path) -> dict[str, Any] | None:
    """A file's JSON object, or None when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def verify_views(directory: Path, state: SessionState, *, clean: bool) -> None:
    """Refuse a session whose durable readable files disagree with the journal (CorruptSession names the file).

    After a clean close every readable file was flushed to stable storage, so any damage is corruption. After a
    crash only message files committed before the last flush are checked; later files are re-derived.
    """
    if clean:
        for name in (layout.SESSION_JSON, layout.PATTERN_STATE_JSON):
            if read_json_object(directory / name) is None:
                raise CorruptSession(str(directory / name), "missing or not a JSON object")
    for key, conv in state.conversations.items():
        messages_dir = None
        for index, seq in enumerate(conv.seqs):
            if not clean and seq > state.synced_seq:
                break
            messages_dir = messages_dir or directory / layout.AGENTS_DIR / key / "messages"
            path = messages_dir / layout.message_file_name(index)
            view = read_json_object(path)
            if view is None:
                raise CorruptSession(str(path), "missing, truncated or not JSON")
            if view.get("message") != conv.messages[index] or view.get("message_id") != index:
                raise CorruptSession(str(path), "does not match the session journal")


def verify_histories(directory: Path, state: SessionState, *, known: SessionState | None = None) -> None:
    """Every stored conversation must be valid as stored (a trailing toolUse awaiting results is allowed).
    Conversations `state` still shares with the known state it was folded onto (`KnownJournal`) are valid."""
    from strands_durable.history import validate

    for key, conv in state.conversations.items():
        if known is not None and key in state.shared and known.conversations.get(key) is conv:
            continue
        violations = validate(conv.messages, mode="stored")
        if violations:
            first = violations[0]
            raise CorruptSession(
                str(directory / layout.AGENTS_DIR / key),
                f"stored history breaks {first.rule} at message {first.message_index} "
                f"(run `strands sessions repair {state.session_id}`)",
            )


def hand_edited_variables(directory: Path, state: SessionState) -> dict[str, Any] | None:
    """Variables a user edited in session.json (the document's advanced workflow), or None when unchanged."""
    view = read_json_object(directory / layout.SESSION_JSON)
    if view is None or not isinstance(view.get("variables"), dict):
        return None
    if view["variables"] != state.meta.get("variables", {}):
        return view["variables"]
    return None
