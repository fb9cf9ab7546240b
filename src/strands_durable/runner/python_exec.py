"""`python_exec` as strands-cli offers it (printed output is the result; its restricted builtins, kept for
compatibility, are no boundary): a run allows it only with `--allow-python-exec`, and the code runs in a child
process isolated as `runner/sandbox.py` says (bubblewrap where it starts, process limits always)."""

from __future__ import annotations

import secrets
import tempfile
from pathlib import Path

from strands_durable.runner.sandbox import run_child
from strands_durable.store.fileops import FileOps

ALLOW_FLAG = "--allow-python-exec"
DEFAULT_TIMEOUT_S = 5
MAX_TIMEOUT_S = 60

# strands-cli's allow-list of builtins: no import, no open, no eval (a convention for the model, not a boundary:
# the isolation is the child process's)
_BUILTINS = (
    "int float str bool list dict tuple set len range enumerate zip sum min max abs round sorted reversed print "
    "isinstance type"
)
_CHILD = f"""
import builtins, contextlib, io
code = sys.stdin.read()
scope = {{"__builtins__": {{name: getattr(builtins, name) for name in {_BUILTINS.split()!r}}}}}
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<python_exec>", "exec"), scope)
except BaseException as exc:
    sys.stdout.write(out.getvalue())
    sys.stderr.write(f"{{type(exc).__name__}}: {{exc}}")
    sys.exit(1)
sys.stdout.write(out.getvalue())
"""


def run_python(code: str, *, timeout_s: int = DEFAULT_TIMEOUT_S, cwd: Path | None = None) -> str:
    """The code's printed output; a ValueError (the tool's error result) when it fails or runs out of time.
    `cwd` (the session's scratch directory) must exist; without one the code gets a private temporary directory,
    removed after the call."""
    if not code.strip():
        raise ValueError("No code provided")
    timeout_s = max(1, min(int(timeout_s), MAX_TIMEOUT_S))
    fileops = FileOps()
    scratch = cwd
    if scratch is None:
        scratch = Path(tempfile.gettempdir()) / f"strands-python-exec-{secrets.token_hex(8)}"
        fileops.makedirs(scratch, durable=False)
    try:
        done = run_child(code, _CHILD, scratch=scratch.resolve(), timeout_s=timeout_s)
    finally:
        if cwd is None:
            fileops.remove_tree(scratch)
    if done.timed_out:
        raise ValueError(f"Execution failed: timed out after {timeout_s} s")
    output = done.stdout
    if done.returncode != 0:
        why = done.stderr.strip()[-2000:] or f"the process ended with status {done.returncode}"
        raise ValueError(f"Execution failed: {why}" + (f"\nOutput:\n{output}" if output else ""))
    return output or "Code executed successfully (no output)"
