"""Where `python_exec`'s code runs: a child process with a clean environment, resource limits and a kill of its whole
process group at the timeout, inside bubblewrap (`bwrap`) where bubblewrap starts.

What holds in each case (the README's `--allow-python-exec` section says the same):

- always: a child Python (`-I -S`), never this process; an environment holding only `PATH`, `LANG`, `HOME` and
  `TMPDIR` (the last two point at the scratch directory), so no secret, API key or credential of the run; the
  working directory is the scratch directory; limits set before the code runs and never raised again: address
  space `MEMORY_BYTES`, CPU time (the timeout plus one second), file size `FILE_BYTES`, no core file, and no new
  process (`RLIMIT_NPROC` 0; the kernel exempts root from this one); at the timeout the whole process group is
  killed (SIGKILL), and so is what is left of it after a normal end; printed output is read up to
  `MAX_OUTPUT_CHARS`.
- with bubblewrap: the child has no network (its own empty network namespace), sees the system read-only (only
  `/usr`, the `/bin`, `/lib`... links and the Python installation are mounted, nothing of the home directory or
  the sessions), the scratch directory is its only writable place, and it runs with no capabilities in its own
  PID namespace: every process it starts (root's too) dies with it, whether or not it left the process group.
- without bubblewrap (not installed, refused by `STRANDS_PYTHON_EXEC_ISOLATION=process`, or failing to start,
  for example where unprivileged user namespaces are disabled, which is said once on stderr): the code can read
  and write whatever the user running the workflow can, and reach the network; root is exempt from the kernel's
  process limit, so a process that leaves the process group (`setsid`) can outlive the call.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

ISOLATION_ENV = "STRANDS_PYTHON_EXEC_ISOLATION"
"""`auto` (default): bubblewrap where it starts, else the process limits alone; `process`: never bubblewrap."""
MEMORY_BYTES = 512 * 1024 * 1024
FILE_BYTES = 64 * 1024 * 1024
MAX_OUTPUT_CHARS = 100_000

# runs first in the child: the limits, then the code on stdin with the builtins `builtins_names` allows
_PRELUDE = """
import resource, sys
for limit, value in {limits!r}:
    resource.setrlimit(getattr(resource, limit), (value, value))
"""


@dataclass(frozen=True)
class Finished:
    """How the child ended: its output (each cut at MAX_OUTPUT_CHARS), exit status, whether the timeout hit."""

    stdout: str
    stderr: str
    returncode: int
    timed_out: bool
    isolation: str  # "bubblewrap" or "process"


def _limits(timeout_s: int) -> list[tuple[str, int]]:
    return [
        ("RLIMIT_AS", MEMORY_BYTES),
        ("RLIMIT_CPU", timeout_s + 1),
        ("RLIMIT_FSIZE", FILE_BYTES),
        ("RLIMIT_CORE", 0),
        ("RLIMIT_NPROC", 0),
    ]


def _clean_environment(scratch: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(scratch), "TMPDIR": str(scratch)}


def _python() -> str:
    """The real interpreter (a virtual environment's `python` is a link to it; the child needs no packages)."""
    return os.path.realpath(sys.executable)


def _bwrap_command(bwrap: str, scratch: Path) -> list[str]:
    command = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    command += ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            command += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            command += ["--ro-bind", top, top]
    if os.path.exists("/etc/ld.so.cache"):
        command += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    install = Path(sys.base_prefix).resolve()
    if not install.is_relative_to("/usr"):
        command += ["--ro-bind", str(install), str(install)]
    command += ["--proc", "/proc", "--dev", "/dev", "--bind", str(scratch), str(scratch), "--chdir", str(scratch)]
    command += ["--remount-ro", "/"]  # bubblewrap's own root (where /tmp would be) is read-only too
    return command


def wanted_isolation() -> str:
    """`auto` or `process`, from STRANDS_PYTHON_EXEC_ISOLATION (anything else is `auto`)."""
    return "process" if os.environ.get(ISOLATION_ENV, "auto").strip().lower() == "process" else "auto"


@functools.cache
def bubblewrap() -> str | None:
    """The path of a bubblewrap that starts a child here, or None (checked once per process; a bwrap that fails to
    start counts as absent, and that is said once on stderr)."""
    bwrap = shutil.which("bwrap")  # found on this process's PATH (the child's clean PATH is not searched)
    if bwrap is None:
        return None
    probe = Path(os.path.realpath(os.sep))  # any existing directory serves as the probe's scratch
    try:
        done = subprocess.run(
            [*_bwrap_command(bwrap, probe), _python(), "-I", "-S", "-c", "pass"],
            capture_output=True,
            env=_clean_environment(probe),
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        reason = str(exc)
    else:
        if done.returncode == 0:
            return bwrap
        reason = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        reason = reason[0]
    print(
        f"Warning: bubblewrap (bwrap) cannot start here ({reason}); python_exec runs with process limits only",
        file=sys.stderr,
    )
    return None


def bubblewrap_works() -> bool:
    return bubblewrap() is not None


def isolation_in_use() -> str:
    """ "bubblewrap" or "process": what the next python_exec call runs under."""
    return "bubblewrap" if wanted_isolation() == "auto" and bubblewrap_works() else "process"


def run_child(code: str, child_program: str, *, scratch: Path, timeout_s: int) -> Finished:
    """Run `child_program` (Python source reading the user's code on stdin) under the limits, in `scratch`."""
    isolation = isolation_in_use()
    program = _PRELUDE.format(limits=_limits(timeout_s)) + child_program
    command = [_python(), "-I", "-S", "-c", program]
    bwrap = bubblewrap() if isolation == "bubblewrap" else None
    if bwrap is not None:
        command = [*_bwrap_command(bwrap, scratch), *command]
    child = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=scratch,
        env=_clean_environment(scratch),
        start_new_session=True,  # its own process group: killed whole
    )
    readers = [_BoundedReader(child.stdout), _BoundedReader(child.stderr)]  # type: ignore[arg-type]
    timed_out = False
    try:
        try:
            assert child.stdin is not None
            child.stdin.write(code.encode("utf-8"))
            child.stdin.close()
        except BrokenPipeError:
            pass
        try:
            child.wait(timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
    finally:
        _kill_group(child.pid)  # at the timeout, and whatever it left running after a normal end
        child.wait()
        for reader in readers:
            reader.join()
    return Finished(readers[0].text(), readers[1].text(), child.returncode, timed_out, isolation)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


class _BoundedReader:
    """Reads a child's pipe to its end in a thread, keeping only the first MAX_OUTPUT_CHARS (4 bytes each)."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self.pipe = pipe
        self.kept = bytearray()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with self.pipe:
            while chunk := self.pipe.read(65536):
                room = MAX_OUTPUT_CHARS * 4 - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]

    def join(self) -> None:
        self.thread.join(2)  # a process that left the group may hold the pipe: its output is not waited for

    def text(self) -> str:
        return self.kept.decode("utf-8", errors="replace")[:MAX_OUTPUT_CHARS]


__all__ = [
    "FILE_BYTES",
    "ISOLATION_ENV",
    "MEMORY_BYTES",
    "Finished",
    "bubblewrap",
    "bubblewrap_works",
    "isolation_in_use",
    "run_child",
]
