"""A child process running or resuming a workflow on S3 (the AWS_* environment points at the test server).

Usage: python -m tests.s3.s3_child run|resume SPEC URL OUT EXEC_LOG SESSION_ID [--kill-at ID] [--hold-at MARKER]
  --kill-at ID       SIGKILL this process at the crash point with that id
  --hold-at MARKER   at the first tool execution write MARKER, then wait until MARKER.go exists
  --go FILE          wait until FILE exists before starting (to start several children at once)
Exits with the error's documented exit code (one `Error: ...` line on stderr) like the CLI.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

from strands_durable import CrashPoints, S3Store, resume, run_workflow
from strands_durable.errors import DurableError
from strands_durable.faults.kit.oracle import RequestLog
from tests.core.support import ExecutionLog, counted_options


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["run", "resume"])
    for name in ("spec", "url", "out", "exec_log", "session_id"):
        parser.add_argument(name)
    parser.add_argument("--kill-at")
    parser.add_argument("--hold-at")
    parser.add_argument("--go")
    args = parser.parse_args()
    points = CrashPoints()
    if args.kill_at:

        def kill(point):
            if point.id == args.kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

        points.subscribe(kill)
    options = counted_options(
        ExecutionLog(Path(args.exec_log)), RequestLog(), out_dir=Path(args.out), crash_points=points
    )
    if args.hold_at:
        for name, tool in list(options.extra_tools.items()):
            options.extra_tools[name] = _holding_once(tool, Path(args.hold_at))
    if args.go:
        while not Path(args.go).exists():
            time.sleep(0.01)
    store = S3Store.from_url(args.url)
    try:
        if args.mode == "run":
            outcome = run_workflow(args.spec, options, store=store, session_id=args.session_id)
        else:
            outcome = resume(args.session_id, options, store=store)
    except DurableError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    print(outcome.status)
    return 0


def _holding_once(tool, marker: Path):
    inner = tool._tool_func

    def hook(*args, **kwargs):
        result = inner(*args, **kwargs)
        if not marker.exists():
            marker.write_text("holding")
            while not Path(f"{marker}.go").exists():
                time.sleep(0.01)
        return result

    tool._tool_func = hook
    return tool


if __name__ == "__main__":
    sys.exit(main())
