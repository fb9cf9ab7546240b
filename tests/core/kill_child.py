"""Child process for the SIGKILL test: runs a chain whose first tool call writes a marker and blocks for ever.

Usage: python -m tests.core.kill_child SPEC SESSIONS_DIR OUT_DIR MARKER EXEC_LOG
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from strands_durable import LocalStore, run_workflow
from strands_durable.faults.kit.oracle import RequestLog
from tests.core.support import ExecutionLog, counted_options


def main() -> None:
    spec, sessions, out, marker, exec_log = sys.argv[1:6]
    options = counted_options(ExecutionLog(Path(exec_log)), RequestLog(), out_dir=Path(out))
    for name, tool in list(options.extra_tools.items()):
        options.extra_tools[name] = _blocking_once(tool, Path(marker))
    run_workflow(spec, options, store=LocalStore(sessions, strict=True))


def _blocking_once(tool, marker: Path):
    """Wrap a tool so that its first execution in this process writes `marker` and then hangs."""
    inner = tool._tool_func

    def hook(*args, **kwargs):
        result = inner(*args, **kwargs)  # the side effect happens (it is counted) before the hang
        if not marker.exists():
            marker.write_text("ready")
            time.sleep(600)
        return result

    tool._tool_func = hook
    return tool


if __name__ == "__main__":
    main()
