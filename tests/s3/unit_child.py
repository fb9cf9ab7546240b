"""A child process writing one unit of a session on S3 under its unit lease (the AWS_* environment points at the
test server), as a Temporal worker's unit attempt does.

Usage: python -m tests.s3.unit_child URL SESSION_ID UNIT ATTEMPT COUNT [--go FILE] [--hold-at MARKER]
  --go FILE          wait until FILE exists before opening (to start several children at once)
  --hold-at MARKER   before the last commit's PUT (its lease checked) write MARKER, then wait until MARKER.go exists
Exits with the error's documented exit code (one `Error: ...` line on stderr) like the CLI.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from strands_durable import CrashPoints, S3Store
from strands_durable.errors import DurableError
from tests.s3.support import unit_message


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("url", "session_id", "unit"):
        parser.add_argument(name)
    parser.add_argument("attempt", type=int)
    parser.add_argument("count", type=int)
    parser.add_argument("--go")
    parser.add_argument("--hold-at")
    args = parser.parse_args()
    points = CrashPoints()
    if args.hold_at:
        marker = Path(args.hold_at)

        def hold(point) -> None:
            if point.site == "store.before_commit" and point.path == "last":
                marker.write_text("holding")
                while not Path(f"{marker}.go").exists():
                    time.sleep(0.01)

        points.subscribe(hold)
    if args.go:
        while not Path(args.go).exists():
            time.sleep(0.01)
    store = S3Store.from_url(args.url)
    try:
        session = store.open_unit(args.session_id, unit=args.unit, attempt=args.attempt, crash_points=points)
        for index in range(args.count):
            last = index == args.count - 1
            session.commit(
                [unit_message(args.unit.removeprefix("task:"), index)],
                durable=last or index % 3 == 2,
                path="last" if last else "",
            )
            time.sleep(0.005)  # a model or tool call
        session.close()
    except DurableError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    print(session.lease_token)
    return 0


if __name__ == "__main__":
    sys.exit(main())
