"""`strands sessions ...` and `strands validate` run inside the test's process: the same `main()` a child runs, its
stdin, stdout, stderr, working directory and exit code taken as a child's would be, without a new interpreter and
its imports (about half a second of CPU per call). Commands whose process is part of what a test proves (a run,
with its signals, tools imported from the working directory and its children) stay in child processes."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

IN_PROCESS = frozenset({"sessions", "validate"})  # commands that read and write the store and print, nothing more


def runs_in_process(args: tuple[Any, ...], env: dict[str, Any] | None) -> bool:
    """A sessions or validate command with the test's own environment (a changed one needs a child)."""
    return not env and bool(args) and str(args[0]) in IN_PROCESS


def strands_in_process(*args: Any, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `strands *args` through `main()` here, as `strands_command` runs it in a child."""
    from strands_durable.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    argv = ["strands", *map(str, args)]
    code: Any = 0
    here = Path.cwd()
    saved = sys.argv, sys.stdin, sys.stdout, sys.stderr
    hard_exit = os._exit
    try:
        os.chdir(cwd)
        sys.argv, sys.stdin, sys.stdout, sys.stderr = argv, io.StringIO(stdin or ""), out, err
        os._exit = _exit_here  # main() ends with os._exit once Temporal's bridge is loaded (by any earlier test)
        try:
            main()
        except SystemExit as exit_:
            code = exit_.code
    finally:
        os._exit = hard_exit
        sys.argv, sys.stdin, sys.stdout, sys.stderr = saved
        os.chdir(here)
    if isinstance(code, str):  # sys.exit("message"): the interpreter prints it and exits 1
        err.write(f"{code}\n")
    returncode = code if isinstance(code, int) else (0 if code is None else 1)
    return subprocess.CompletedProcess(argv, returncode, out.getvalue(), err.getvalue())


def _exit_here(code: int) -> None:
    """`os._exit(code)` in a child ends it with `code` after main() flushed its output; here it ends the call."""
    raise SystemExit(code)
