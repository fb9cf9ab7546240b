"""`python_exec` as strands-cli runs it (restricted builtins, printed output is the result), in a child process so
that its timeout is real: a run allows it only with `--allow-python-exec`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ALLOW_FLAG = "--allow-python-exec"
DEFAULT_TIMEOUT_S = 5
MAX_TIMEOUT_S = 60
MAX_OUTPUT_CHARS = 100_000

# strands-cli's allow-list of builtins: no import, no open, no eval
_BUILTINS = (
    "int float str bool list dict tuple set len range enumerate zip sum min max abs round sorted reversed print "
    "isinstance type"
)
_CHILD = f"""
import builtins, contextlib, io, sys
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
    `cwd` must exist."""
    if not code.strip():
        raise ValueError("No code provided")
    timeout_s = max(1, min(int(timeout_s), MAX_TIMEOUT_S))
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _CHILD],
            input=code,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            cwd=cwd,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ValueError(f"Execution failed: timed out after {timeout_s} s") from None
    output = done.stdout[:MAX_OUTPUT_CHARS]
    if done.returncode != 0:
        raise ValueError(
            f"Execution failed: {done.stderr.strip()[-2000:]}" + (f"\nOutput:\n{output}" if output else "")
        )
    return output or "Code executed successfully (no output)"
