"""A chaos run's scratch root (`strands-chaos-*`), which names the process that owns it, and the removal of the
roots that processes killed before their cleanup left behind (a run ended by SIGTERM or SIGKILL, a CI time-out):
on /dev/shm they would hold memory until the next boot."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from strands_durable.faults.kit.scratch import write_scratch
from strands_durable.store.fileops import FileOps

PREFIX = "strands-chaos-"
OWNER = ".owner"  # "<pid> <start time> <pid namespace>": who made the root (the last two: Linux, else empty)


def new_scratch_root(parent: str | None) -> Path:
    """A new scratch root in `parent` (None: the system temp directory), owned by this process; the roots there
    whose owners are gone are removed first (a root without an owner file is left alone)."""
    for root in Path(parent or tempfile.gettempdir()).glob(f"{PREFIX}*"):
        if _owner_gone(root):
            with contextlib.suppress(OSError):  # another process may be removing it too
                FileOps().remove_tree(root)
    root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
    write_scratch(root / OWNER, f"{os.getpid()} {_start_time(os.getpid())} {_pid_namespace()}".encode())
    return root


def _owner_gone(root: Path) -> bool:
    try:
        pid_text, start, namespace = (root / OWNER).read_text().split(" ")
        pid = int(pid_text)
    except (OSError, ValueError):
        return False
    if namespace != _pid_namespace():  # its pid means another process here (a container sharing the directory)
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return bool(start) and _start_time(pid) not in ("", start)  # the pid was reused by another process


def _start_time(pid: int) -> str:
    """When the process started, in clock ticks since boot (Linux's /proc), or "" where that cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[19]


def _pid_namespace() -> str:
    """This process's pid namespace (Linux), or "" where there is none to read."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""
