"""How a command ends on an error: one line on stderr, the contract's exit code, a traceback only with --debug."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

from strands_durable.errors import DurableError, exit_code_for

_debug = False


def set_debug(enabled: bool) -> None:
    global _debug
    _debug = _debug or enabled


def fail(exc: BaseException) -> NoReturn:
    """Print `Error: <message>` on stderr and exit with the code `errors.exit_code_for` gives."""
    raise typer.Exit(report_failure(exc))


def report_failure(exc: BaseException) -> int:
    """Print `Error: <message>` on stderr (the traceback first with --debug); return the exit code
    `errors.exit_code_for` gives: an OSError is 12, anything that is not a DurableError 70."""
    if _debug:
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    if isinstance(exc, DurableError):
        message = str(exc)
    else:
        message = f"{type(exc).__name__}: {exc}" + ("" if _debug else " (run with --debug for the traceback)")
    print(f"Error: {message}", file=sys.stderr)
    return exit_code_for(exc)
