"""Creating a local session so that, seen from outside, `session_<id>/` is a whole session or nothing.

A session is built in a hidden staging directory of the sessions root (`.session_<id>.<random>.creating`: its lease
taken, spec snapshot and journal header durable) and renamed to `session_<id>` in one step; the rename fails when
another creator got there first, so two processes creating one id make one session. What a crashed creation leaves
is cleared by the next creation of that id, never while a live process holds it: a `session_<id>` directory without
a journal that holds our lease file (an older version's creation, or a `sessions delete`, killed midway), and old
staging directories (hidden; they never block an id).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import time
from collections.abc import Callable
from pathlib import Path

from strands_durable.errors import SessionExists, SessionInUse, UsageError
from strands_durable.store import layout
from strands_durable.store.fileops import FileOps
from strands_durable.store.io_errors import io_error
from strands_durable.store.journal import JOURNAL_NAME
from strands_durable.store.lease import Lease, live_holder

__all__ = ["STAGING_STALE_S", "create_session_directory", "is_staging_name"]

STAGING_STALE_S = 10.0  # a staging directory whose lock nobody holds is cleared once it is this old
_STAGING = re.compile(rf"^\.{re.escape(layout.SESSION_PREFIX)}(?P<id>.+)\.[0-9a-f]{{8}}\.(?P<kind>creating|cleared)$")


def is_staging_name(name: str) -> bool:
    """Whether a name in the sessions root is a creation's staging directory (or a cleared leftover)."""
    return bool(_STAGING.match(name))


def _hidden_name(session_id: str, kind: str) -> str:
    return f".{layout.SESSION_PREFIX}{session_id}.{secrets.token_hex(4)}.{kind}"


def create_session_directory(
    root: Path, session_id: str, fileops: FileOps, fill: Callable[[Path], None]
) -> tuple[Path, Lease]:
    """Make `session_<id>` under `root` whole in one rename: `fill(staging)` writes its files (durably) into a
    staging directory whose lease is held; the lease, held on, is returned with the session's directory.

    SessionExists when another process created the id first; SessionInUse when a live process holds what is at its
    path; UsageError when a directory that is not ours is there; StorageIOError (exit 12) naming the session when
    the disk refuses. A failure leaves nothing behind."""
    directory = layout.session_dir(root, session_id)
    try:
        fileops.makedirs(root)
    except OSError as exc:
        raise io_error(exc, f"cannot create session {session_id} in {root}") from exc
    _clear_leftovers(root, directory, session_id, fileops)
    staging = root / _hidden_name(session_id, "creating")
    try:
        fileops.mkdir(staging)
    except OSError as exc:
        raise io_error(exc, f"cannot create session {session_id} in {root}") from exc
    try:
        lease = Lease(staging, session_id, fileops).acquire()
    except BaseException:
        _remove(staging, fileops)
        raise
    try:
        fill(staging)
        fileops.rename(staging, directory)
    except OSError as exc:
        _remove(staging, fileops)
        lease.release()
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
            _refuse_existing(directory, session_id)
        raise io_error(exc, f"cannot create session {session_id} in {root}") from exc
    except BaseException:
        _remove(staging, fileops)
        lease.release()
        raise
    lease.moved_to(directory)
    try:
        fileops.fsync_dir(root)  # the rename is what makes the session exist: durable before we say it does
    except OSError as exc:
        lease.release()
        raise io_error(exc, f"cannot create session {session_id} in {root}") from exc
    return directory, lease


def _refuse_existing(directory: Path, session_id: str) -> None:
    """Say why `directory` could not become the session: the id's session, a live holder, or someone else's files."""
    if not directory.is_dir():
        why = "it is not a directory"
    elif (directory / JOURNAL_NAME).is_file():
        raise SessionExists(session_id)
    else:
        holder = live_holder(directory)
        if holder is not None:
            raise SessionInUse(session_id, holder.pid, holder.host)
        why = "it has no journal"
    raise UsageError(
        f"Cannot create session {session_id}: {directory} exists and is not a strands-durable session ({why}); "
        "move it away or delete it"
    )


def _clear_leftovers(root: Path, directory: Path, session_id: str, fileops: FileOps) -> None:
    """Clear what crashed creations of this id left: its half directory, then its old staging directories."""
    if directory.is_dir() and not (directory / JOURNAL_NAME).exists() and (directory / layout.LEASE_LOCK).exists():
        _clear_half_session(root, directory, session_id, fileops)
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        match = _STAGING.match(name)
        if match is None or match["id"] != session_id:
            continue
        path = root / name
        if match["kind"] == "creating" and not _abandoned(path):
            continue
        _remove(path, fileops)


def _clear_half_session(root: Path, directory: Path, session_id: str, fileops: FileOps) -> None:
    """Move a journal-less `session_<id>` of ours out of the way under its lease (SessionInUse while a live process
    holds it), then delete it. The move frees the id at once; a crash before the delete leaves a hidden leftover."""
    lease = Lease(directory, session_id, fileops).acquire()
    trash = root / _hidden_name(session_id, "cleared")
    try:
        if (directory / JOURNAL_NAME).exists():
            return  # a session after all
        fileops.rename(directory, trash)
        fileops.fsync_dir(root)
    except OSError as exc:
        raise io_error(exc, f"cannot clear the unfinished creation of session {session_id} in {root}") from exc
    finally:
        lease.release()
    _remove(trash, fileops)


def _abandoned(staging: Path) -> bool:
    """A staging directory nobody works on: no live lease, and old enough that its creator cannot be between
    making it and locking its lease file."""
    if live_holder(staging) is not None:
        return False
    try:
        return time.time() - staging.stat().st_mtime > STAGING_STALE_S
    except OSError:
        return False


def _remove(path: Path, fileops: FileOps) -> None:
    """Remove a staging or cleared directory; a disk that refuses leaves a hidden directory no command reads."""
    with contextlib.suppress(OSError):
        fileops.remove_tree(path)
