"""The `strands` command line: a thin typer face over the core; heavy modules are imported inside commands."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from strands_durable import __version__
from strands_durable.errors import DurableError, ExitCode, exit_code_for

app = typer.Typer(
    name="strands",
    help="Run strands-cli v0 workflow specs durably: every step, model turn and tool result survives a crash.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_DEBUG = False


def fail(exc: BaseException) -> None:
    """Print one line on stderr and exit with the contract's code (a traceback only with --debug)."""
    if _DEBUG:
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    message = str(exc) if isinstance(exc, DurableError) else f"{type(exc).__name__}: {exc}"
    print(f"Error: {message}", file=sys.stderr)
    raise typer.Exit(exit_code_for(exc))


def _version(value: bool) -> None:
    if value:
        print(f"strands-durable {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
) -> None:
    global _DEBUG
    _DEBUG = debug


@app.command()
def validate(
    spec: Annotated[Path, typer.Argument(help="Workflow spec (YAML or JSON).")],
) -> None:
    """Check a spec's schema and internal references (exit 3 with one line naming file, key and line)."""
    from strands_durable.spec import load_spec

    try:
        loaded = load_spec(spec)
    except DurableError as exc:
        fail(exc)
    print(f"✓ {spec}: valid {loaded.pattern.type} workflow '{loaded.name}'")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(int(ExitCode.SIGINT))


__all__ = ["app", "fail", "main"]
