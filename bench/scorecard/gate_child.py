"""Runs the gate on one scorecard backend in a process of its own and prints the report's JSON on stdout:

    python -m bench.scorecard.gate_child FACTORY RUN_LIMIT_S [EVERY]

EVERY > 1 explores only every EVERY-th crash point (a partial gate; its report says so).

A child per backend keeps one backend's hang, crash or leftover threads out of the others' runs (the gate forks
from a warm parent with no threads alive) and lets the driver stop it after its time limit.
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    factory_name, run_limit_s, *rest = argv
    every = int(rest[0]) if rest else 1
    from bench.scorecard.factories import backend_named

    from strands_durable.faults.backends import run_backend_gate

    backend = backend_named(factory_name)
    options = {"every": every} if every > 1 else {}
    report = run_backend_gate(backend.factory, name=backend.reference, run_limit_s=float(run_limit_s), **options)
    print(json.dumps(report.as_json()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
