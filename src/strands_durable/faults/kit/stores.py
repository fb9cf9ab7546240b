"""Where the fault kit keeps its sessions: the one module of `faults/` that names a store implementation.

Every run of the kit (golden, crashing, resuming) has a sessions root, a local directory of its own. `store_at`
turns that root into the store the run uses: a `LocalStore` on the directory by default, or, when the chaos
sessions location is an S3 URL (`STRANDS_CHAOS_SESSIONS=s3://BUCKET/PREFIX`, set by
`pytest --strands-chaos-sessions`), an `S3Store` under a prefix of its own for that root (the directory then
keeps only what names the prefix and the S3 sessions' local scratch directories). Everything else of the kit
asks the seam the store offers (`SessionStore.replayable`: the journal's bytes, a session seeded from a prefix,
the fold of a known prefix; docs/storage.md, "Replaying a session") and never which store it has.

The classes that fault the local files themselves (power, disk, compound, hostile) take theirs from `file_store`: they
exist only for the local store, and say so (`FILE_CLASSES`).
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path
from typing import Any

from strands_durable.errors import UsageError
from strands_durable.store import LocalStore, SessionStore
from strands_durable.store.base import KnownJournal
from strands_durable.store.fileops import FileOps

__all__ = [
    "FILE_CLASSES",
    "SESSIONS_ENV",
    "FileStore",
    "chaos_sessions",
    "file_store",
    "mark_death",
    "on_s3",
    "seeds_in_place",
    "store_at",
    "stored_bytes",
]

SESSIONS_ENV = "STRANDS_CHAOS_SESSIONS"  # where the kit's sessions live: unset (local files) or s3://BUCKET/PREFIX
FILE_CLASSES = ("power", "disk", "compound", "hostile")  # classes that fault or replace the local files themselves
_PREFIX_FILE = ".s3-prefix"  # in a sessions root on S3: the prefix its sessions are under
_DEATHS_FILE = ".s3-deaths"  # in a sessions root on S3: how many holders of its sessions the kit killed
_OPS = FileOps()
_CLIENTS: dict[int, Any] = {}  # process id -> the S3 client of the kit's stores in that process
_SESSION: dict[str, Any] = {}  # the boto3 Session the clients are built from
# after each death the kit's stores' clocks move one hour further: past the lease the dead process held (a real
# resumer would wait out the TTL, 30 s by default), including one taken by a store opened after an earlier death
_AFTER_A_DEATH_S = 3600.0


def chaos_sessions() -> str | None:
    """The configured location of the kit's sessions (None: local directories)."""
    value = os.environ.get(SESSIONS_ENV, "").strip()
    return value or None


def on_s3() -> bool:
    return (chaos_sessions() or "").startswith("s3://")


def check_location(value: str) -> str:
    """`value` as a chaos sessions location; UsageError naming it when it is not `s3://BUCKET/PREFIX`."""
    from strands_durable.store.s3 import parse_url

    if not value.startswith("s3://"):
        raise UsageError(f"--strands-chaos-sessions: {value!r} is not s3://BUCKET/PREFIX")
    parse_url(value)
    return value


def store_at(sessions: Path, *, known: KnownJournal | None = None) -> SessionStore:
    """The store of the run whose sessions root is `sessions`, new at each call. `known`: a journal prefix the kit
    already read (the store folds only what follows it). A caller that opens the root's sessions many times keeps
    the store it got and hands it on (the explorer's run directories: faults/classes/explore.py)."""
    location = chaos_sessions()
    store = LocalStore(sessions) if location is None else _s3_store(location, sessions)
    return store.knowing(known) if known is not None else store


def seeds_in_place() -> bool:
    """Whether a sessions root the kit used can be seeded again in place (its files pruned and rewritten): with
    local files only; a root on S3 is made anew instead, so it gets a prefix of its own (`_root_prefix`)."""
    return not on_s3()


def _s3_store(location: str, sessions: Path) -> SessionStore:
    import time

    from strands_durable.store.s3 import S3Store, parse_url

    bucket, prefix = parse_url(location)
    client = _CLIENTS.get(os.getpid())
    if client is None:  # one per process (a forked child makes its own: a client's connections are not fork-safe)
        import boto3

        from strands_durable.store.s3 import make_client

        if _SESSION.get("boto3") is None:  # made once, before the children fork: they inherit its loaded model
            _SESSION["boto3"] = boto3.session.Session()
        client = _CLIENTS[os.getpid()] = make_client(session=_SESSION["boto3"])
    # a session whose holder the kit killed (`mark_death`) is taken over at once: the clock of the stores opened
    # after the death is past the lease the dead process held, as a real resumer's would be after the TTL
    offset = _AFTER_A_DEATH_S * _deaths(sessions)
    return S3Store(
        bucket,
        f"{prefix}/{_root_prefix(sessions)}".strip("/"),
        scratch_root=sessions / "s3-scratch",
        keep_history=True,  # compacted as any session (reads stay bounded), and still cut at byte offsets
        clock=lambda: time.time() + offset,
        client=client,
    )


def _root_prefix(sessions: Path) -> str:
    """The S3 prefix of the sessions root `sessions`, kept in a file of the root: a root made anew (the kit
    removes and recreates roots between runs) gets a prefix of its own, so no run sees another's objects."""
    marker = sessions / _PREFIX_FILE
    try:
        return marker.read_text().strip()
    except FileNotFoundError:
        pass
    digest = hashlib.sha256(str(sessions.resolve()).encode()).hexdigest()[:12]
    prefix = f"chaos-{digest}-{secrets.token_hex(4)}"
    _OPS.makedirs(sessions, durable=False)
    _OPS.write_atomic(marker, prefix.encode(), durable=False)
    return prefix


def _deaths(sessions: Path) -> int:
    try:
        return int((sessions / _DEATHS_FILE).read_text())
    except FileNotFoundError:
        return 0


def mark_death(sessions: Path) -> None:
    """The kit killed a process that may hold a session of `sessions`: the stores opened from now on take its
    lease over at once (local leases end with their holder: nothing to do)."""
    if on_s3():
        _OPS.makedirs(sessions, durable=False)
        _OPS.write_atomic(sessions / _DEATHS_FILE, str(_deaths(sessions) + 1).encode(), durable=False)


FileStore = LocalStore  # what `file_store` returns: a store whose files a class faults


def file_store(sessions: Path, **options: Any) -> FileStore:
    """A `LocalStore` on `sessions`, for the classes whose faults are the local files themselves (`FILE_CLASSES`):
    a recording or faulty file layer (`fileops=`), damaged journals and readable files."""
    return LocalStore(sessions, **options)


def stored_bytes(store: SessionStore, session_id: str) -> dict[str, bytes]:
    """What the store keeps of a session, by name (a local session's files, the tools' scratch/ left out; on S3 its
    journal): what the secret-echo rule reads."""
    if isinstance(store, LocalStore):
        directory = store.directory_of(session_id)
        return {
            str(path.relative_to(directory)): path.read_bytes()
            for path in sorted(directory.rglob("*"))
            if path.is_file() and not path.is_symlink() and path.relative_to(directory).parts[0] != "scratch"
        }
    return {"journal": store.journal_bytes(session_id)}
