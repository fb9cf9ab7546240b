"""One open local session: commits appended to the journal, readable files derived from it, the lease held.

The journal line is the commit point; the readable files are written after it (they may lag, never lead). The
message files of durable commits are written by a background writer (store/writer_thread.py), at most every
VIEW_INTERVAL_S; the other readable files, and whatever the writer has not written, by `flush_views` (status
changes, unit progress at most every VIEW_INTERVAL_S, close).
A deferred commit (`commit(wait=False)`) is appended at once and fdatasynced by the session's syncer thread
(store/syncer_thread.py), which covers every record appended before it starts (group commit); `wait_durable` is
the barrier callers pass before any external effect, and the writer only writes what the syncer made durable.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from bisect import bisect_right
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from strands_durable.crashpoints import CrashPoints, Durable, ToolKey, tool_result_keys
from strands_durable.errors import CorruptSession, SessionChanged, StorageIOError
from strands_durable.store import layout
from strands_durable.store.base import Session
from strands_durable.store.checkpoint import checkpoint_due, compacted_journal
from strands_durable.store.fileops import FileOps
from strands_durable.store.io_errors import io_error
from strands_durable.store.journal import JOURNAL_NAME, encode_line, header_line, utc_now
from strands_durable.store.lease import Lease
from strands_durable.store.state import SessionState, apply_record, compact_events
from strands_durable.store.syncer_thread import SyncerThread
from strands_durable.store.verify import check_committed_histories, readable_file_findings
from strands_durable.store.views import (
    agent_view,
    dump,
    dump_compact,
    message_file_view,
    message_view,
    pattern_state_view,
    session_view,
)
from strands_durable.store.writer_thread import WriterThread


class StoreSettings(Protocol):
    """What a local session needs of the store that opened it (a `LocalStore`): its file layer and settings."""

    fileops: FileOps
    strict: bool
    checkpoint_min_bytes: int
    inline_sync_below_s: float


# events whose commit refreshes the readable files at once; a unit's progress refreshes them at most every
# VIEW_INTERVAL_S (they may lag the journal, never lead it); close always brings them up to date
_FLUSH_KINDS = frozenset({"session", "status", "artifact", "variables", "generation"})
_PROGRESS_KINDS = frozenset({"unit", "pattern_state"})
VIEW_INTERVAL_S = 0.5


class LocalSession(Session):
    def __init__(
        self,
        store: StoreSettings,
        directory: Path,
        state: SessionState,
        lease: Lease,
        crash_points: CrashPoints | None,
        *,
        checkpoint_end: int = 0,
    ) -> None:
        """`checkpoint_end`: the bytes of the journal up to the end of its checkpoint record (0: it has none)."""
        self.store = store
        self.directory = directory
        self.state = state
        self.warnings: list[str] = []
        self._lease = lease
        self._ops = store.fileops
        self._crash = crash_points or CrashPoints()
        self._journal_path = directory / JOURNAL_NAME
        self._boot = self._ops.boot_id()  # recorded with the first commit (see `journal.refuse_damaged_last`)
        try:
            self._appender = self._ops.open_append(self._journal_path)
            found = self._journal_path.stat()
        except OSError as exc:
            raise io_error(exc, f"cannot open the journal of session {state.session_id}") from exc
        self._journal_size = found.st_size
        self._journal_identity = (found.st_dev, found.st_ino)  # the file this session appends to
        self._written_messages: dict[str, int] = {}
        self._written_generation: dict[str, int] = {}
        self._stale_agent_files: set[str] = set()  # agent.json to write although its messages are on disk
        self._agent_dirs: dict[str, tuple[Path, Path]] = {}  # conversation key -> (its directory, its messages/)
        self._top_files: dict[str, bytes] = {}  # session.json / pattern_state.json -> the bytes last written
        self._backups: dict[str, Path] = {}
        self._broken: str | None = None
        self._closed = False
        self._lock = threading.RLock()  # concurrent units (tasks, branches, workers) commit from threads
        self._flushed_at = 0.0
        self._checkpoint_end = checkpoint_end
        self._trusted_at_open = -1  # the seq every readable file agreed with at open (`mark_views_written`)
        self._durable_seq = state.seq  # the last record known durable (what was read at open is on disk)
        self._deferred_seq = state.seq  # the last deferred commit (appended; durable once the syncer says so)
        self._unpromised: list[tuple[int, tuple[ToolKey, ...]]] = []  # deferred commits no barrier has covered yet
        self._views_lock = threading.Lock()  # whoever writes readable files; taken after `_lock`, never before
        # at most every VIEW_INTERVAL_S, like the flushes: each new file's metadata rides the journal's next
        # fdatasync (one ext4 journal commit), so files written in batches keep the fdatasyncs cheap
        self._writer = WriterThread(self._write_durable_messages, min_interval_s=VIEW_INTERVAL_S)
        self._syncer = SyncerThread(
            self._sync_journal,
            self._became_durable,
            durable=state.seq,
            name=f"sync-{state.session_id[:8]}",
            # a file layer that wraps the sync (recording, faulting) has costs of its own, a device its own too
            cost_key=(type(self._ops), found.st_dev),
            inline_below_s=store.inline_sync_below_s,
        )
        # an injected crash ends the process in all but name: its views writer does not wake again (the next open
        # re-derives what it had not written, as after a real crash)
        self._crash.on_crash(self._writer.halt)

    def _still_here(self) -> bool:
        """Whether the file at the journal's path is still the journal this session appends to."""
        try:
            found = os.stat(self._journal_path)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise io_error(exc, f"cannot read the journal of session {self.state.session_id}") from exc
        return (found.st_dev, found.st_ino) == self._journal_identity

    def _writable_here(self) -> bool:
        """`_still_here` for the writer thread, which reports nothing: a failed stat is left to the next flush."""
        try:
            return self._still_here()
        except StorageIOError:
            return False

    # -- commits ------------------------------------------------------------------------------------
    def commit(
        self,
        events: list[dict[str, Any]],
        *,
        path: str = "",
        durable: bool = True,
        synced: bool = False,
        wait: bool = True,
    ) -> int:
        with self._lock:
            return self._commit(events, path=path, durable=durable, synced=synced, wait=wait)

    def wait_durable(self, seq: int | None = None) -> None:
        with self._lock:
            target = self._deferred_seq if seq is None else min(seq, self._deferred_seq)
        self._wait_deferred(target)
        self._check_still_here()  # the barrier before an effect outside the process: it must act for this session

    def _check_still_here(self) -> None:
        """SessionChanged when the journal this session appends to is no longer the one at the session's path (the
        directory was deleted, moved or replaced under this process): commits would go to a file nobody reads, and
        an effect would act for a session that no longer exists. One stat; our open descriptor keeps the old inode
        alive, so a new file at the path can never carry its number."""
        if not self._still_here():
            raise SessionChanged(
                f"Session {self.state.session_id} was deleted or replaced while this process held it "
                f"({self._journal_path} is no longer the journal it was writing); nothing more is committed or run"
            )

    def _wait_deferred(self, target: int | None = None) -> None:
        """Block until the deferred commits up to `target` (default: all so far) are durable; a failed fdatasync
        raises here what the synchronous commit would have raised (exit 12), and the session stays broken."""
        target = self._deferred_seq if target is None else target
        if self._syncer.durable < target:
            try:
                self._syncer.wait(target)
            except OSError as exc:
                where = f"{self.state.session_id} ({self._journal_path})"
                raise io_error(exc, f"cannot commit to session {where}") from exc
        if self._unpromised:
            self._promise(self._syncer.durable)

    def _promise(self, seq: int) -> None:
        """Announce (`Durable`) that the deferred commits up to `seq` are durable, now that a caller learns it."""
        with self._lock:
            done = [entry for entry in self._unpromised if entry[0] <= seq]
            if not done:
                return
            del self._unpromised[: len(done)]
            self._crash.notify(Durable(done[-1][0], tuple(key for _, keys in done for key in keys)))

    def _sync_journal(self) -> None:
        """The syncer's work: fdatasync the journal (everything appended before it starts)."""
        try:
            self._appender.sync()
        except OSError as exc:
            self._broken = os.strerror(exc.errno) if exc.errno else str(exc)  # the page cache cannot be trusted
            raise

    def _became_durable(self, seq: int) -> None:
        if seq > self._durable_seq:
            self._durable_seq = seq
        self._writer.wake()

    def _commit(
        self,
        events: list[dict[str, Any]],
        *,
        path: str,
        durable: bool,
        synced: bool,
        wait: bool,
        views_boot: str | None = None,
    ) -> int:
        if self._broken:
            raise StorageIOError(f"session {self.state.session_id} cannot commit after an I/O failure: {self._broken}")
        self._check_still_here()
        defer, durable = durable and not wait, durable and wait
        if wait and not durable:
            self._wait_deferred()  # a commit that waits is a barrier (a durable one's own fdatasync covers them)
        events = compact_events(self.state, events)
        record: dict[str, Any] = {"seq": self.state.seq + 1, "at": utc_now(), "events": events}
        if synced:
            record["synced"] = True
        if views_boot is not None:
            record["views_boot"] = views_boot
        if self._boot is not None and self.state.written_boot != self._boot:
            record["boot"] = self._boot  # from here on this boot wrote the journal, after reading all of it
        line = encode_line(record)
        data = line.data
        self._emit_commit(self._crash, "store.before_commit", path, events, durable=durable, synced=synced)
        sync_s: float | None = None
        try:
            self._appender.append(data)
            if durable:
                started = time.perf_counter()
                self._appender.sync()
                sync_s = time.perf_counter() - started
        except OSError as exc:
            self._undo_partial_append(exc)
            raise io_error(exc, f"cannot commit to session {self.state.session_id} ({self._journal_path})") from exc
        self._journal_size += len(data)
        # fold what was written, not the caller's objects: the state never aliases a structure the runner may
        # still change, and in memory is exactly what a reader of the journal gets
        apply_record(self.state, line.record)
        if self.store.strict:
            self._check_histories(events)
        if durable:
            self._durable_seq = int(record["seq"])
            self._syncer.synced(self._durable_seq, cost_s=sync_s)
            if self._unpromised:  # its fdatasync covered the deferred commits before it
                self._promise(self._durable_seq)
            self._writer.wake()
        elif defer:
            self._deferred_seq = int(record["seq"])
            self._unpromised.append((self._deferred_seq, tool_result_keys(events)))
            self._syncer.request(self._deferred_seq)
        if self._checkpoint_due(closing=False):
            self._checkpoint()
        kinds = {event.get("type") for event in events}
        if kinds & _FLUSH_KINDS or (kinds & _PROGRESS_KINDS and time.monotonic() - self._flushed_at >= VIEW_INTERVAL_S):
            self._wait_deferred()  # readable files never lead the durable journal
            self.flush_views()
        self._emit_commit(
            self._crash, "store.after_commit", path, events, durable=durable, synced=synced, seq=int(record["seq"])
        )
        return int(record["seq"])

    def journal_size(self) -> int:
        """The journal's length now: every record appended (a process that died now leaves them in the page
        cache); `LocalStore.journal_bytes` cut there holds them."""
        return self._journal_size

    def stored_seq(self) -> int:
        return self.state.seq

    def _checkpoint_due(self, *, closing: bool) -> bool:
        if self.state.seq < 1:  # the header alone: nothing to compact
            return False
        minimum = self.store.checkpoint_min_bytes
        return checkpoint_due(self._journal_size, self._checkpoint_end, minimum, closing=closing)

    def _checkpoint(self) -> None:
        """Replace the journal with its compacted form (header, one checkpoint record) atomically: the temp file
        is fsynced before the rename and the directory after it, so the next append lands in a file whose name
        is durable. Any failure stops the session's commits (the appender may point at a replaced file); what was
        committed stays in whichever journal the name holds, and a resume reads it."""
        self._wait_deferred()  # what it replaces is durable, and the syncer done with the appender it closes
        self._syncer.drain()
        try:
            data = compacted_journal(header_line(self._journal_path), self.state)
            self._ops.write_atomic(self._journal_path, data)
            self._appender.close()
            self._appender = self._ops.open_append(self._journal_path)
            found = self._journal_path.stat()
            self._journal_identity = (found.st_dev, found.st_ino)
        except OSError as exc:
            self._broken = os.strerror(exc.errno) if exc.errno else str(exc)
            raise io_error(exc, f"cannot write a checkpoint of session {self.state.session_id}") from exc
        self._journal_size = self._checkpoint_end = len(data)

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
        check_committed_histories(self.state, events)

    # -- readable files -----------------------------------------------------------------------------
    def flush_views(self, *, messages: bool = True) -> None:
        """Write the readable files that changed since the last flush, without fsync: the journal is the truth,
        and after a crash any file newer than the last trusted mark (`SessionState.trusted_seq`) is re-derived
        from it. Message files are new files written once (no temp file needed: a torn one is detected against
        the journal); the files that are rewritten (agent.json, pattern_state.json, session.json) are replaced
        atomically. `messages=False` writes only session.json and pattern_state.json."""
        with self._views_lock:
            self._flush_views(messages)

    def _flush_views(self, messages: bool) -> None:
        self._check_still_here()  # never write readable files into a directory that is not this session's
        state = self.state
        ops = self._ops
        self._flushed_at = time.monotonic()
        try:
            for key, conv in state.conversations.items() if messages else ():
                agent_dir, messages_dir = self._agent_dir(key)
                written = self._written_messages.get(key)
                if written is None:
                    self._make_dirs_inside(messages_dir)
                    written = 0
                if self._written_generation.get(key, 0) != conv.generation:
                    self._backup_messages(key, messages_dir)
                    written = 0
                if written == len(conv.messages) and key not in self._stale_agent_files:
                    continue
                for index in range(written, len(conv.messages)):
                    target = messages_dir / layout.message_file_name(index)
                    ops.write_file(target, dump_compact(message_view(conv, index)), sync=False)
                self._written_messages[key] = len(conv.messages)  # counted before agent.json: it may fail alone
                self._written_generation[key] = conv.generation
                self._stale_agent_files.add(key)
                ops.write_atomic(agent_dir / "agent.json", dump_compact(agent_view(conv)), durable=False)
                self._stale_agent_files.discard(key)
            self._write_top_file(layout.PATTERN_STATE_JSON, dump_compact(pattern_state_view(state)))
            self._write_top_file(layout.SESSION_JSON, dump(session_view(state)))
        except OSError as exc:
            raise io_error(exc, f"cannot write the readable files of session {state.session_id}") from exc

    def _make_dirs_inside(self, path: Path) -> None:
        """Create `path` and its missing parents below the session's directory, never the directory itself (not
        durable: message files are re-derived). A session directory deleted under us stays deleted: a lagging
        write fails (FileNotFoundError) instead of leaving a half session at its path."""
        missing: list[Path] = []
        probe = path
        while probe != self.directory and not probe.is_dir():
            missing.append(probe)
            probe = probe.parent
        for directory in reversed(missing):
            try:
                self._ops.mkdir(directory)
            except FileExistsError:
                continue

    def _agent_dir(self, key: str) -> tuple[Path, Path]:
        """A conversation's directory and its messages/ (built once: every flush walks every conversation)."""
        dirs = self._agent_dirs.get(key)
        if dirs is None:
            agent_dir = self.directory / layout.AGENTS_DIR / layout.safe_key(key)
            dirs = self._agent_dirs[key] = (agent_dir, agent_dir / "messages")
        return dirs

    def _write_top_file(self, name: str, data: bytes) -> None:
        """Replace session.json or pattern_state.json unless this session last wrote these very bytes (a replace
        of an existing file makes ext4 flush the new data at once, ~0.6 ms here; close would repeat the status
        change's flush). The bytes are remembered only once the rename succeeded."""
        if self._top_files.get(name) == data:
            return
        self._ops.write_atomic(self.directory / name, data, durable=False)
        self._top_files[name] = data

    def _write_durable_messages(self) -> None:
        """The writer's work: the message files of durable records not written yet (a conversation whose
        generation changed is left to `flush_views`, which moves its old files to backups first). Messages are
        copied out under the session lock and written under the views lock, after checking that no flush wrote
        them meanwhile. A failure leaves them to the next flush, which reports it."""
        with self._lock:
            if self._closed or self._broken or not self._writable_here():
                return
            batches = []
            for key, conv in self.state.conversations.items():
                start = self._written_messages.get(key, 0)
                end = bisect_right(conv.seqs, self._durable_seq)
                if end > start and conv.generation == self._written_generation.get(key, 0):
                    batches.append((key, conv.generation, start, conv.messages[start:end], conv.units[start:end]))
        for key, generation, start, messages, units in batches:
            with self._views_lock:
                if self._written_messages.get(key, 0) != start or self._written_generation.get(key, 0) != generation:
                    continue
                messages_dir = self._agent_dir(key)[1]
                try:
                    if key not in self._written_messages:
                        self._make_dirs_inside(messages_dir)
                    for offset, message in enumerate(messages):
                        index = start + offset
                        view = dump_compact(message_file_view(index, units[offset], message))
                        self._ops.write_file(messages_dir / layout.message_file_name(index), view, sync=False)
                except OSError:
                    return
                self._written_messages[key] = start + len(messages)
                self._written_generation[key] = generation
                self._stale_agent_files.add(key)  # its message_count is behind: the next flush writes it

    def _backup_messages(self, key: str, messages_dir: Path) -> None:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        target = self.directory / layout.BACKUPS_DIR / stamp / layout.AGENTS_DIR / key
        self._ops.makedirs(target)
        self._ops.rename(messages_dir, target / "messages")
        self._ops.fsync_dir(target)
        self._ops.mkdir(messages_dir)
        self._ops.fsync_dir(messages_dir.parent)
        self._backups[key] = target

    def mark_intact_message_files(self) -> None:
        """After a crash: count the message files already on disk with the right bytes as written, so only the
        missing or damaged ones are written again (re-deriving a long session would otherwise rewrite them all).
        An agent.json that does not match is written at the next flush even when all its messages are intact."""
        agents_dir = f"{self.directory / layout.AGENTS_DIR}{os.sep}"
        try:
            on_disk_keys = set(os.listdir(agents_dir))
        except FileNotFoundError:
            return
        for key, conv in self.state.conversations.items():
            if conv.generation or key not in on_disk_keys:
                continue  # written from scratch (a repaired history's old files go to backups first)
            messages_dir = f"{agents_dir}{key}{os.sep}messages{os.sep}"
            try:
                names = set(os.listdir(messages_dir))  # one listing instead of an open per missing file
            except OSError:
                continue
            intact = 0
            for index in range(len(conv.messages)):
                name = layout.message_file_name(index)
                if name not in names or not self._ops.holds(
                    messages_dir + name, dump_compact(message_view(conv, index))
                ):
                    break
                intact += 1
            self._written_messages[key] = intact
            self._written_generation[key] = conv.generation
            if not self._ops.holds(f"{agents_dir}{key}{os.sep}agent.json", dump_compact(agent_view(conv))):
                self._stale_agent_files.add(key)

    def defer_views(self) -> None:
        """Count the readable files as flushed now, so the next flush, and the writer's next run, wait for the usual
        interval."""
        self._flushed_at = time.monotonic()
        self._writer.defer()

    def mark_views_written(self) -> None:
        """Open found every readable file trusted (`SessionState.views_trusted`): none needs writing."""
        self._trusted_at_open = self.state.seq
        for key, conv in self.state.conversations.items():
            self._written_messages[key] = len(conv.messages)
            self._written_generation[key] = conv.generation

    def rewrite_views(self) -> None:
        """Write every readable file again from the journal."""
        self._trusted_at_open = -1  # written again: the close marks them
        with self._lock:
            with self._views_lock:
                self._written_messages.clear()
                self._top_files.clear()
            self.flush_views()

    def refresh_views(self) -> list[str]:
        """Write every readable file again when one disagrees with the journal (`sessions repair`); returns the
        files found damaged."""
        with self._lock:
            damaged = sorted(
                {
                    f.where
                    for f in readable_file_findings(
                        self.directory, self.state, trusted=self.state.trusted_seq(self._ops.boot_id())
                    )
                    if f.severity == "error"
                }
            )
            if damaged:
                self.rewrite_views()
            return damaged

    def backup_of(self, conversation: str) -> str | None:
        target = self._backups.get(conversation)
        return str(target) if target is not None else None

    # -- lifecycle ----------------------------------------------------------------------------------
    def spec_snapshot(self) -> bytes:
        path = self.directory / layout.SPEC_SNAPSHOT
        try:
            return self._ops.read_bytes(path)
        except FileNotFoundError:
            raise CorruptSession(str(path), "missing") from None
        except OSError as exc:
            raise io_error(exc, f"cannot read the spec snapshot of session {self.state.session_id}") from exc

    def spec_snapshot_name(self) -> str:
        return str(self.directory / layout.SPEC_SNAPSHOT)

    def abandon(self) -> None:
        """Drop the session as a crashed process would: no flush, no final record, the lease released."""
        self._syncer.stop()
        self._writer.stop()
        self._closed = True
        self._appender.close()
        self._lease.release()

    def close(self) -> None:
        if self._closed:
            return
        if self._trusted_at_open == self.state.seq:
            # nothing committed or written since an open that trusted every readable file: the journal's last
            # mark still says so; a `sessions repair` that found nothing leaves the session's bytes as they were
            self.abandon()
            return
        if not self._broken:
            try:
                self._wait_deferred()  # a failed fdatasync of a deferred commit surfaces here at the latest
            except BaseException:
                self.abandon()
                raise
        self._syncer.stop()
        self._writer.stop()  # what it had not written yet, the flush below writes
        self._closed = True
        try:
            if not self._broken:
                self.flush_views()
                boot = self._ops.boot_id()
                if boot is None:  # nothing would tell the next open that a power cut came first: flush them now
                    try:
                        self._ops.sync_all()
                    except OSError as exc:
                        raise io_error(exc, f"cannot close session {self.state.session_id}") from exc
                with self._lock:
                    if self._checkpoint_due(closing=True):  # before the mark: the journal ends with a short record
                        self._checkpoint()
                    # the mark: every readable file is written, and on stable storage (a sync mark) or in this
                    # boot's page cache (`SessionState.views_trusted`; the kernel writes it back in its own time)
                    self._commit([], path="close", durable=True, synced=boot is None, wait=True, views_boot=boot)
        finally:
            self._appender.close()
            self._lease.release()
