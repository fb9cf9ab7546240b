"""The `strands` command line: a thin typer face over the core; heavy modules are imported inside commands.

Commands: `run` (cli/run.py), `sessions ...` (cli/sessions.py), `validate` (here).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from strands_durable import __version__
from strands_durable.cli.chaos import chaos
from strands_durable.cli.failure import fail, set_debug
from strands_durable.cli.run import run
from strands_durable.cli.sessions import sessions_app
from strands_durable.errors import DurableError, ExitCode

app = typer.Typer(
    name="strands",
    help="Run strands-cli v0 workflow specs durably: every step, model turn and tool result survives a crash.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click help: starts in a third of the time (no rich markdown import)
)
app.command("run")(run)
app.add_typer(sessions_app, name="sessions")
app.command("chaos")(chaos)


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
    set_debug(debug)


@app.command()
def validate(
    spec: Annotated[Path, typer.Argument(metavar="SPEC", help="Workflow spec (YAML or JSON).")],
) -> None:
    """Check a spec without running it.

    Schema and internal references; exit 3 with one line naming file, key path and line.
    """
    from strands_durable.spec import load_spec

    try:
        loaded = load_spec(spec)
    except DurableError as exc:
        fail(exc)
    for warning in loaded.warnings:
        print(f"Warning: {warning}", file=sys.stderr)
    print(f"✓ {spec}: valid {loaded.pattern.type} workflow '{loaded.name}'")


def main() -> None:
    try:
        code = app(standalone_mode=False)
    except KeyboardInterrupt:
        sys.exit(int(ExitCode.SIGINT))
    except BrokenPipeError:  # stdout's reader went away outside a run (a run stops at a safe point instead)
        from strands_durable.cli.output import silence_closed_stream

        silence_closed_stream(sys.stdout)
        sys.exit(int(ExitCode.SIGPIPE))
    except typer.Abort:
        print("Aborted.", file=sys.stderr)
        sys.exit(int(ExitCode.SIGINT))
    except typer.TyperException as exc:  # click's own usage errors: one line too, like every other error
        sys.exit(usage_failure(exc))
    sys.exit(code if isinstance(code, int) else 0)


def usage_failure(exc: typer.TyperException) -> int:
    """Print a flag or argument error as one `Error:` line (with where to find help); return its exit code."""
    code = int(getattr(exc, "exit_code", ExitCode.USAGE))
    if type(exc).__name__ == "NoArgsIsHelpError":  # `strands sessions` alone: the help is the answer
        ctx = getattr(exc, "ctx", None)
        print(ctx.get_help() if ctx is not None else str(exc))
        return 0
    format_message = getattr(exc, "format_message", None)
    message = format_message() if callable(format_message) else str(exc)
    ctx = getattr(exc, "ctx", None)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    print(f"Error: {message}{hint}", file=sys.stderr)
    return code


__all__ = ["app", "fail", "main"]
