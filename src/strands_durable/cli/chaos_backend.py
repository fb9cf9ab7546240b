"""`strands chaos backend MODULE:FACTORY [--json] [--level L]`: the durability gate for a Strands session backend.

`FACTORY(ctx)` returns a SessionManager, SessionRepository or Storage (docs/backends.md); MODULE is imported
from the current directory or the installed packages. Prints the clause table
(on stderr with `--json`, when stdout holds only the JSON report). Exit 0 when every applicable clause passes,
1 when one fails, 2 for a factory that cannot be imported or returns none of the three kinds, 12 when the factory
raises (a server not running).
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from strands_durable.cli.failure import fail
from strands_durable.errors import DurableError, ExitCode

COMMAND = "chaos backend"  # `strands chaos backend ...` reaches this command (cli/app.py routes the two words)


def chaos_backend(
    factory: Annotated[str, typer.Argument(metavar="MODULE:FACTORY", help="The factory: FACTORY(ctx) -> backend.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print only the JSON report on stdout.")] = False,
    level: Annotated[
        str | None,
        typer.Option(
            "--level",
            metavar="LEVEL",
            help="Run only what this level asks: crash-safe, message-durable, concurrent-safe.",
        ),
    ] = None,
    point: Annotated[
        list[str] | None,
        typer.Option(
            "--point",
            metavar="ID",
            help="Explore only this crash point (repeatable): an agent point, graph:ID or swarm:ID for a team's, "
            "two-resumers for the race.",
        ),
    ] = None,
    run_limit: Annotated[
        float, typer.Option("--run-limit", metavar="SECONDS", help="Stop any one run after this long (liveness).")
    ] = 60.0,
) -> None:
    """Gate a session backend: kills at every point of built-in conversations, resumes both ways, two resumers."""
    import os

    from strands_durable.faults.backends import run_backend_gate

    if os.getcwd() not in sys.path:  # MODULE is looked up from the current directory too, as `python -m` does
        sys.path.insert(0, os.getcwd())
    print(f"strands chaos backend: gating {factory} ...", file=sys.stderr)
    try:
        report = run_backend_gate(factory, level=level, points=point or None, run_limit_s=run_limit)
    except DurableError as exc:
        fail(exc)
    if as_json:
        print(report.table(), file=sys.stderr)
        print(json.dumps(report.as_json(), indent=2))
    else:
        print(report.table())
    raise typer.Exit(0 if report.passed else int(ExitCode.CHECK_VIOLATIONS))
