"""Sessions on the local file system: a checksummed journal is the commit record, readable files derive from it.

Layout of `<root>/session_<id>/`: journal.log (the truth), session.json, pattern_state.json,
spec_snapshot.yaml, agents/<key>/agent.json, agents/<key>/messages/message_<N>.json, lease.json, lease.lock,
backups/<timestamp>/ (never read as data), scratch/. This module is the store (create, open, list, delete);
`local_session` is one open session, `verify` checks files against the journal. See docs/storage.md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import strands_durable.store.events as event_kinds
from strands_durable.crashpoints import CrashPoints
from strands_durable.errors import CorruptSession, DurableError, SessionNotFound, SessionUnreadable
from strands_durable.store import journal as journal_codec
from strands_durable.store import layout
from strands_durable.store.base import (
    Finding,
    Inspection,
    KnownJournal,
    LeaseHolder,
    SessionStore,
    SessionSummary,
    Workspace,
)
from strands_durable.store.checkpoint import CHECKPOINT_MIN_BYTES
from strands_durable.store.fileops import FileOps, temp_files
from strands_durable.store.ids import is_session_id, new_session_meta, resolve_session_id
from strands_durable.store.io_errors import io_error
from strands_durable.store.journal import (
    HEADER_KIND,
    JOURNAL_NAME,
    JournalEnds,
    encode_line,
    header_of,
    is_header_line,
    journal_ends,
    read_journal,
    refuse_damaged_last,
    utc_now,
)
from strands_durable.store.lease import Lease, live_holder
from strands_durable.store.listing import (
    UNREADABLE,
    corrupt_summary,
    file_error,
    folder_kind,
    summary_of_view,
)
from strands_durable.store.local_create import create_session_directory
from strands_durable.store.local_session import VIEW_INTERVAL_S, LocalSession
from strands_durable.store.state import SCHEMA_VERSION, SessionState, copy_state, fold
from strands_durable.store.syncer_thread import INLINE_SYNC_BELOW_S
from strands_durable.store.verify import (
    damaged_last_proof,
    hand_edited_variables,
    read_journal_findings,
    read_json_object,
    readable_file_findings,
    spec_snapshot_findings,
    verify_histories,
    verify_views,
)
from strands_durable.store.views import session_view

__all__ = ["VIEW_INTERVAL_S", "LocalSession", "LocalStore", "read_json_object", "utc_now"]


class LocalStore(SessionStore):
    replayable = True  # the journal is the session's record: its bytes, a seeded prefix, a known prefix

    def __init__(
        self,
        root: Path | str | None = None,
        *,
        fileops: FileOps | None = None,
        strict: bool | None = None,
        checkpoint_min_bytes: int = CHECKPOINT_MIN_BYTES,
        inline_sync_below_s: float = INLINE_SYNC_BELOW_S,
    ) -> None:
        """`strict` validates every conversation a commit touches (`mode="stored"`); it defaults to the
        environment variable STRANDS_DURABLE_STRICT (the test suite turns it on). `checkpoint_min_bytes`: the least
        history a checkpoint compacts (store/checkpoint.py). `inline_sync_below_s`: a deferred commit is synced
        inline, without the syncer thread, where the journal's last timed fdatasync took less (0: never;
        store/syncer_thread.py)."""
        self.root = Path(root).expanduser() if root is not None else layout.default_sessions_dir()
        self.fileops = fileops or FileOps()
        self.strict = strict if strict is not None else os.environ.get("STRANDS_DURABLE_STRICT", "") not in ("", "0")
        self._known: KnownJournal | None = None  # `knowing`: a prefix whose records are not folded again
        self.checkpoint_min_bytes = checkpoint_min_bytes
        self.inline_sync_below_s = inline_sync_below_s

    # -- creating and opening ------------------------------------------------------------------------
    def create(
        self,
        meta: dict[str, Any],
        spec_snapshot: bytes,
        *,
        crash_points: CrashPoints | None = None,
        session_id: str | None = None,
    ) -> LocalSession:
        """A new session, created whole in one rename (store/local_create.py): a failure or a kill leaves either no
        `session_<id>` at all or a complete one. SessionExists when the id is taken, even by a process that
        created it at the same moment."""
        meta = new_session_meta(meta, session_id, self.session_ids())
        session_id = meta["session_id"]
        ops = self.fileops
        header = {
            "seq": 0,
            "at": utc_now(),
            "kind": HEADER_KIND,
            "schema": SCHEMA_VERSION,
            "events": [event_kinds.session(meta), event_kinds.status("running")],
        }

        def fill(staging: Path) -> None:
            ops.write_atomic(staging / layout.SPEC_SNAPSHOT, spec_snapshot)
            ops.write_atomic(staging / JOURNAL_NAME, encode_line(header).data)

        directory, lease = create_session_directory(self.root, session_id, ops, fill)
        # from here on the session exists (its journal is durable): a failure leaves a session to resume or delete
        try:
            session = LocalSession(self, directory, fold([header]), lease, crash_points)
            session.flush_views()
        except BaseException:
            lease.release()
            raise
        return session

    def _directory(self, session_id: str) -> Path:
        """The directory of a session that is ours or looks like one (`listing.folder_kind`); SessionNotFound for
        anything else, SessionUnreadable (exit 17) when this process may not read it."""
        if not is_session_id(session_id):
            raise SessionNotFound(session_id)
        directory = layout.session_dir(self.root, session_id)
        kind = folder_kind(directory)
        if kind is None:
            raise SessionNotFound(session_id)
        if kind == UNREADABLE:
            raise SessionUnreadable(str(directory), "permission denied")
        return directory

    def _read(
        self, directory: Path, *, repair_tail: bool, upto_seq: int | None = None, data: bytes | None = None
    ) -> tuple[SessionState, SessionState | None, int]:
        """The journal's state (as of record `upto_seq`), the known state it was folded onto (None: read from
        the first byte), and where its checkpoint record ends (0: none read). `data`: the journal's bytes when
        the caller read them already."""
        path = directory / JOURNAL_NAME
        if data is None:
            try:
                data = self.fileops.read_bytes(path)
            except OSError as exc:
                raise file_error(exc, path) from exc
        known = self._known
        if (
            known is not None
            and layout.session_dir(self.root, known.session_id) / JOURNAL_NAME == path
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
                raise CorruptSession(str(path), "no complete header record" if data else "empty")
            state = SessionState()
        if contents.damaged_last:  # never cut a record that something proves was committed
            boots, first = ((base.written_boot, base.views_boot), base.seq + 1) if base is not None else ((), 0)
            proof = damaged_last_proof(directory, contents, self.fileops.boot_id(), boots, first_seq=first)
            refuse_damaged_last(path, contents, proof)
        if contents.torn_tail and repair_tail:
            try:
                self.fileops.truncate(path, start + contents.valid_length)
            except OSError as exc:
                session_id = directory.name[len(layout.SESSION_PREFIX) :]
                raise io_error(exc, f"cannot cut the torn tail of the journal of session {session_id}") from exc
        records = contents.records
        if upto_seq is not None:
            if contents.checkpoint_end and upto_seq < records[1]["seq"]:
                raise CorruptSession(str(path), f"record {upto_seq} is compacted into a checkpoint")
            records = [record for record in records if record["seq"] <= upto_seq]
        try:
            return fold(records, state), base, contents.checkpoint_end
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptSession(str(path), f"a record does not apply: {exc}") from exc

    def open(self, session_id: str, *, crash_points: CrashPoints | None = None, check: bool = True) -> LocalSession:
        directory = self._directory(session_id)
        lease = Lease(directory, session_id, self.fileops).acquire()
        try:
            state, known, checkpoint_end = self._read(directory, repair_tail=True)
            trusted = state.trusted_seq(self.fileops.boot_id())
            clean = trusted == state.seq
            self._remove_temp_files(directory, session_id)
            if check:
                verify_views(directory, state, trusted=trusted)
                verify_histories(directory, state, known=known)
            session = LocalSession(self, directory, state, lease, crash_points, checkpoint_end=checkpoint_end)
            if clean:
                session.mark_views_written()
            else:
                session.mark_intact_message_files()
            edited = hand_edited_variables(directory, state)
            if edited is not None:
                session.warnings.append(
                    f"Using variables edited by hand in {directory / layout.SESSION_JSON}: {json.dumps(edited)}"
                )
                session.commit([event_kinds.variables(edited, "session.json")])
            if not clean:
                # what the crash left behind is re-derived with the next throttled flush, a status change or
                # close (a long session need not rewrite its files before it can continue; they are derived)
                session.defer_views()
            return session
        except BaseException:
            lease.release()
            raise

    def _remove_temp_files(self, directory: Path, session_id: str) -> None:
        """Remove the temp files a crash left (backups/ excepted), wherever they are in the session directory."""
        for path in temp_files(directory, skip=layout.BACKUPS_DIR):  # nor anything under one
            try:
                self.fileops.remove(path)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise io_error(exc, f"cannot remove leftover temp files of session {session_id}") from exc

    def load(self, session_id: str, *, upto_seq: int | None = None) -> SessionState:
        """The session's state; with `upto_seq`, as it was after that journal record. The journal is read once:
        when its first line is our header the folder is ours (what `_directory` would read it for); otherwise
        `_directory` says what the folder is, and raises for anything but a damaged session of ours."""
        if not is_session_id(session_id):
            raise SessionNotFound(session_id)
        directory = layout.session_dir(self.root, session_id)
        try:
            data: bytes | None = self.fileops.read_bytes(directory / JOURNAL_NAME)
        except OSError:
            data = None
        if data is None or not is_header_line(header_of(data)):
            directory, data = self._directory(session_id), None  # `_read` reads it again and names what is wrong
        return self._read(directory, repair_tail=False, upto_seq=upto_seq, data=data)[0]

    # -- listing and housekeeping ---------------------------------------------------------------------
    def _root_names(self) -> list[str]:
        """The names in the sessions folder (none when it does not exist yet)."""
        try:
            return os.listdir(self.root)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise io_error(exc, f"cannot list sessions in {self.root}") from exc

    def _candidates(self) -> list[str]:
        """Ids of the directories named like sessions (whatever they hold: see `listing.folder_kind`)."""
        prefix = layout.SESSION_PREFIX
        names = self._root_names()
        return [name[len(prefix) :] for name in names if name.startswith(prefix) and is_session_id(name[len(prefix) :])]

    def session_ids(self) -> list[str]:
        # ours, or looks like ours (damaged, unreadable); a directory that merely has the name is never touched
        return [sid for sid in self._candidates() if folder_kind(self._path(sid)) is not None]

    def _path(self, session_id: str) -> Path:
        return self.root / f"{layout.SESSION_PREFIX}{session_id}"

    def resolve(self, id_or_prefix: str) -> str:
        text = id_or_prefix.strip()
        if is_session_id(text) and folder_kind(self._path(text)) is not None:
            return text  # an exact id needs no listing of every session's journal
        return resolve_session_id(text, self.session_ids())

    def list(self) -> list[SessionSummary]:
        """Every session, newest first; one that cannot be read is listed as `corrupt (<file>: <reason>)`, and no
        session's damage changes another's row."""
        summaries = []
        for session_id in self._candidates():
            summary = self._summary(session_id)
            if summary is not None:
                summaries.append(summary)
        summaries.sort(key=lambda s: s.updated_at or "", reverse=True)
        return summaries

    def _summary(self, session_id: str) -> SessionSummary | None:
        directory = self._path(session_id)
        try:
            ends: JournalEnds | None = journal_ends(directory / JOURNAL_NAME)  # one open for a healthy session
        except OSError:
            ends = None
        if ends is None or not ends.ours:  # is it a session at all (a stranger's folder is never read)?
            kind = folder_kind(directory)
            if kind is None:
                return None
            if kind == UNREADABLE:
                return corrupt_summary(directory, session_id, SessionUnreadable(str(directory), "permission denied"))
        try:
            view = self._listing_view(directory, session_id, ends)
            stale = view.get("status", "running") == "running" and live_holder(directory) is None
        except (DurableError, OSError, ValueError) as exc:  # this session's own damage, shown on its own row
            return corrupt_summary(directory, session_id, exc)
        return summary_of_view(session_id, view, stale=stale)

    def _listing_view(self, directory: Path, session_id: str, ends: JournalEnds | None) -> dict[str, Any]:
        """session.json when the journal's last record confirms it (the view is as of that record, or only the
        close's mark follows it); otherwise the view of the journal itself (CorruptSession or SessionUnreadable
        naming the file when it cannot be read)."""
        if ends is None or not ends.ours:
            self._read(directory, repair_tail=False)  # raises naming what is wrong, as every command would
            raise CorruptSession(str(directory / JOURNAL_NAME), "not a strands-durable journal")
        tail = ends.last
        view = read_json_object(directory / layout.SESSION_JSON)
        if view is not None and view.get("session_id") == session_id:
            seq = view.get("journal_seq")
            if (
                tail is not None
                and isinstance(seq, int)
                and (tail.get("seq") == seq or (tail.get("seq") == seq + 1 and not tail.get("events")))
            ):
                return view
        return session_view(self._read(directory, repair_tail=False)[0])

    def holder(self, session_id: str) -> LeaseHolder | None:
        directory = self._directory(session_id)
        try:
            return live_holder(directory)
        except OSError as exc:
            raise file_error(exc, directory / layout.LEASE_LOCK) from exc

    def inspect(self, session_id: str) -> Inspection:
        directory = self._directory(session_id)
        findings: list[Finding] = []
        state = read_journal_findings(directory, self.fileops, findings)
        if state is not None:
            findings.extend(readable_file_findings(directory, state, trusted=state.trusted_seq(self.fileops.boot_id())))
            findings.extend(spec_snapshot_findings(directory, self.fileops, state.meta))
        try:
            holder = live_holder(directory)
        except OSError as exc:
            findings.append(Finding("error", layout.LEASE_LOCK, f"cannot read: {exc.strerror or exc}"))
            holder = None
        return Inspection(session_id, state, findings, holder)

    def workspace(self, session_id: str) -> Workspace:
        # a path, as the S3 store's: asked for a session already opened or inspected, so its folder is not read
        # again to tell whether it is ours (`_directory`)
        if not is_session_id(session_id):
            raise SessionNotFound(session_id)
        return Workspace(scratch_dir=layout.session_dir(self.root, session_id) / "scratch", fileops=self.fileops)

    def directory_of(self, session_id: str) -> Path:
        """The session's directory (the local store's own; above `store/` only the fault kit, which faults its
        files, uses it)."""
        return self._directory(session_id)

    # -- replaying (`SessionStore.replayable`), and the files for harnesses that damage them (faults/) ----------
    def knowing(self, known: KnownJournal) -> LocalStore:
        twin = LocalStore(
            self.root,
            fileops=self.fileops,
            strict=self.strict,
            checkpoint_min_bytes=self.checkpoint_min_bytes,
            inline_sync_below_s=self.inline_sync_below_s,
        )
        twin._known = known
        return twin

    def journal_path(self, session_id: str) -> Path:
        """The file that is the session's commit record, whether or not it exists yet (a harness that faults the
        local files damages it; read its bytes with `journal_bytes`)."""
        return layout.session_dir(self.root, session_id) / JOURNAL_NAME

    def journal_bytes(self, session_id: str) -> bytes:
        """The session's commit-record bytes as they are on disk (a torn tail included)."""
        return self.fileops.read_bytes(self._directory(session_id) / JOURNAL_NAME)

    def spec_snapshot_bytes(self, session_id: str) -> bytes:
        """The spec snapshot the session was created with, read without taking its lease."""
        return self.fileops.read_bytes(self._directory(session_id) / layout.SPEC_SNAPSHOT)

    def message_files(self, session_id: str, index: int) -> list[Path]:
        """The readable file of message `index` of every conversation that has one, in path order."""
        agents = self._directory(session_id) / layout.AGENTS_DIR
        return sorted(agents.glob(f"*/messages/{layout.message_file_name(index)}"))

    def conversation_dirs(self, session_id: str) -> list[Path]:
        """The directories of the conversations' readable files, in path order."""
        return sorted((self._directory(session_id) / layout.AGENTS_DIR).iterdir())

    def seed(self, session_id: str, *, header: dict[str, Any], tail: bytes, spec_snapshot: bytes) -> bytes:
        """Write a session as a process that died after committing `tail` would have left it: its spec snapshot
        and a journal of `header` (a header record, as `read_journal_bytes` returns it) followed by `tail` (whole
        records taken from another journal of the same session). Nothing is fsynced and nothing is renamed into
        place (a harness's scratch copy, read by nobody until this returns; the chaos explorer seeds one per crash
        point); the journal is written last. Returns the journal's bytes."""
        directory = layout.session_dir(self.root, session_id)
        self.fileops.makedirs(directory, durable=False)
        self.fileops.write_file(directory / layout.SPEC_SNAPSHOT, spec_snapshot, sync=False)
        journal = journal_codec.encode_line(header).data + tail
        self.fileops.write_file(directory / JOURNAL_NAME, journal, sync=False)
        return journal

    def delete(self, session_id: str) -> None:
        """Delete a session under its lease, never following a symbolic link out of it: a symlinked session
        directory is removed as a link (what it points at is left alone), a link inside it is removed as a link.
        The directory is first renamed out of the sessions' names (`.deleting_session_<id>`: no command lists
        it from then on), then emptied with the journal removed last; a delete cut short is finished by the next
        `delete` or `cleanup` (`finish_interrupted_deletes`). A damaged session is deleted too (`listing.folder_kind`:
        a directory that merely has a session's name is never touched)."""
        if not is_session_id(session_id):
            raise SessionNotFound(session_id)
        link = layout.session_dir(self.root, session_id)
        doomed = self.root / f"{layout.DELETING_PREFIX}{link.name}"
        if session_id in self.interrupted_deletes() and not link.exists():
            self._empty_and_remove(doomed, session_id)  # a delete of this session was cut short: finish it
            return
        if link.is_symlink():
            self._directory(session_id)  # SessionNotFound unless a session's journal is behind it
            try:
                self.fileops.remove(link)
                self.fileops.fsync_dir(self.root)
            except OSError as exc:
                raise io_error(exc, f"cannot delete session {session_id}") from exc
            return
        directory = self._directory(session_id)
        lease = Lease(directory, session_id, self.fileops).acquire()
        try:
            self.fileops.rename(directory, doomed)  # the lock stays held: it is on the open file, not the name
            self.fileops.fsync_dir(self.root)
        except OSError as exc:
            raise io_error(exc, f"cannot delete session {session_id}") from exc
        finally:
            lease.release()
        self._empty_and_remove(doomed, session_id)

    def _empty_and_remove(self, doomed: Path, session_id: str) -> None:
        """Remove a renamed session directory: its entries (links as links), the journal last, then itself."""
        ops = self.fileops
        try:
            with os.scandir(doomed) as entries:
                paths = sorted((Path(entry.path) for entry in entries), key=lambda p: p.name == JOURNAL_NAME)
            for path in paths:
                if path.is_dir() and not path.is_symlink():
                    ops.remove_tree(path)
                else:
                    ops.remove(path)
            ops.rmdir(doomed)
            ops.fsync_dir(self.root)
        except OSError as exc:
            raise io_error(exc, f"cannot delete session {session_id}") from exc

    def interrupted_deletes(self) -> list[str]:
        """Ids of the sessions whose delete was cut short (their renamed directories are still there)."""
        prefix = layout.DELETING_PREFIX + layout.SESSION_PREFIX
        found = []
        for name in sorted(self._root_names()):
            session_id = name[len(prefix) :]
            path = self.root / name
            if name.startswith(prefix) and is_session_id(session_id) and path.is_dir() and not path.is_symlink():
                found.append(session_id)
        return found

    def finish_interrupted_deletes(self, failed: list[tuple[str, DurableError]] | None = None) -> list[str]:
        """Finish every delete that was cut short; the ids finished (`SessionStore.finish_interrupted_deletes`)."""
        finished = []
        for session_id in self.interrupted_deletes():
            doomed = self.root / f"{layout.DELETING_PREFIX}{layout.SESSION_PREFIX}{session_id}"
            try:
                self._empty_and_remove(doomed, session_id)
            except DurableError as exc:
                if failed is None:
                    raise
                failed.append((session_id, exc))
                continue
            finished.append(session_id)
        return finished
