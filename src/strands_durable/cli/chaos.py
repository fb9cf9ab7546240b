"""`strands chaos SPEC... --budget 10m`: the real-fault soak under every fault class (faults/classes/names.py).

Prints a progress display on stderr, then the summary; writes the JSON report with `--report`. Exit 0 (PASS) only
when every fault class ran on every spec and nothing was found (zero is the bar), 1 (FAIL) when something was
found, 21 (INCOMPLETE) when nothing was found but a (fault class, spec) pair did not run (the budget ran out, a spec
not explorable; the summary and the report's `missing_pairs` name them), 2 for bad flags, 3 for a spec file that is
missing or unreadable (as `strands run` says it), 130 after Ctrl+C (the partial table and report are still
written; never passed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from strands_durable.cli.failure import fail
from strands_durable.errors import DurableError, ExitCode
from strands_durable.faults.classes.names import FAULT_CLASSES


def chaos(
    specs: Annotated[list[Path], typer.Argument(help="Workflow specs (*.strands.yaml) to break and resume.")],
    budget: Annotated[
        str,
        typer.Option(
            "--budget", metavar="DURATION", help="Time to spend (30s, 10m, 2h); ends within it plus a few seconds."
        ),
    ] = "10m",
    faults: Annotated[
        str,
        typer.Option(
            "--faults",
            metavar="CLASSES",
            help=f"Comma-separated fault classes: {', '.join(FAULT_CLASSES)} (or one another package adds); all "
            "(the default) is every class.",
        ),
    ] = "all",
    report: Annotated[
        Path | None, typer.Option("--report", metavar="FILE", help="Write the JSON report to this file.")
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", metavar="N", help="Seed of the synthetic model and of random kills.")
    ] = 0,
    workdir: Annotated[
        Path | None,
        typer.Option(
            "--workdir",
            metavar="DIR",
            help="Scratch directory (default: a new one in STRANDS_CHAOS_TMPDIR, /dev/shm or the temp dir).",
        ),
    ] = None,
    rounds: Annotated[
        int | None, typer.Option("--rounds", metavar="N", help="Stop after this many rounds (0: gate only).")
    ] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show the progress display.")] = True,
) -> None:
    """Soak specs under real faults and print crash points, unique states, divergences, invalid histories and
    data lost per fault class (zero is the bar). `strands chaos backend MODULE:FACTORY` gates a session backend
    instead (docs/backends.md)."""
    from strands_durable.faults.classes.registry import parse_fault_classes
    from strands_durable.faults.soak import soak, write_report
    from strands_durable.operations import parse_age
    from strands_durable.spec import read_spec_bytes

    try:
        budget_s = parse_age(budget, what="--budget").total_seconds()
        classes = parse_fault_classes(faults)
        for spec in specs:
            read_spec_bytes(spec)  # a missing or unreadable spec is exit 3, worded as `strands run` words it
        result = soak(
            [s.resolve() for s in specs],
            faults=classes,
            budget_s=budget_s,
            seed=seed,
            workdir=workdir,
            progress=progress,
            max_rounds=None if rounds is None else max(1, rounds),
        )
        if report is not None:
            write_report(result, report)
    except (DurableError, OSError) as exc:
        fail(exc)
    for line in result.summary_lines():
        print(line)
    if report is not None:
        print(f"report: {report}")
    if result.interrupted:
        raise typer.Exit(int(ExitCode.SIGINT))
    raise typer.Exit(int(VERDICT_EXITS[result.verdict]))


VERDICT_EXITS = {"PASS": ExitCode.OK, "FAIL": ExitCode.CHECK_VIOLATIONS, "INCOMPLETE": ExitCode.CHAOS_INCOMPLETE}
"""The exit code of each verdict of a soak that was not interrupted (faults/soak.py `SoakResult.verdict`)."""
