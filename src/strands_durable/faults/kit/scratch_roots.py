"""A chaos run's scratch root (`strands-chaos-*`), whose name says which process owns it, and the removal of the
roots that processes killed before their cleanup left behind (a run ended by SIGTERM or SIGKILL, a CI time-out):
on /dev/shm they would hold memory until the next boot.

The owner is in the root's name, `strands-chaos-<pid>.<start time>.<pid namespace>-<random>`, not in a file: making
a root writes nothing, so the pytest-xdist controller, which only makes one, imports no file layer (nor the store
package it lives in). The file layer is imported only to remove a root whose owner is gone."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path

PREFIX = "strands-chaos-"
_OWNED = re.compile(re.escape(PREFIX) + r"(\d+)\.(\d+)\.(\d+)-")  # pid, start time, namespace (0: unknown)


def new_scratch_root(parent: str | None) -> Path:
    """A new scratch root in `parent` (None: the system temp directory), owned by this process; the roots there
    whose owners are gone are removed first (a root whose name names no owner is left alone)."""
    for root in Path(parent or tempfile.gettempdir()).glob(f"{PREFIX}*"):
        if _owner_gone(root.name):
            from strands_durable.store.fileops import FileOps

            with contextlib.suppress(OSError):  # another process may be removing it too
                FileOps().remove_tree(root)
    owner = f"{os.getpid()}.{_start_time(os.getpid())}.{_pid_namespace()}"
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{owner}-", dir=parent))


def _owner_gone(name: str) -> bool:
    owned = _OWNED.match(name)
    if owned is None:
        return False
    pid, start, namespace = (int(part) for part in owned.groups())
    if namespace != _pid_namespace():  # its pid means another process here (a container sharing the directory)
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return start != 0 and _start_time(pid) not in (0, start)  # the pid was reused by another process


def _start_time(pid: int) -> int:
    """When the process started, in clock ticks since boot (Linux's /proc), or 0 where that cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rsplit(")", 1)[1].split()[19])


def _pid_namespace() -> int:
    """This process's pid namespace (Linux: the number in `pid:[N]`), or 0 where there is none to read."""
    try:
        link = os.readlink("/proc/self/ns/pid")
    except OSError:
        return 0
    digits = re.sub(r"\D", "", link)
    return int(digits) if digits else 0
