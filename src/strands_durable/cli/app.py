"""The `strands` command line: a thin typer face over the core; heavy modules are imported inside commands.

Commands: `run` (cli/run.py; `--engine temporal` in cli/temporal.py), `sessions ...` (cli/sessions.py),
`worker` (cli/temporal.py), `validate` (here).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from strands_durable import __version__
from strands_durable.cli.chaos import chaos
from strands_durable.cli.chaos_backend import COMMAND as CHAOS_BACKEND
from strands_durable.cli.chaos_backend import chaos_backend
from strands_durable.cli.closed_stdout import WatchedStdout
from strands_durable.cli.failure import fail, report_failure, set_debug
from strands_durable.cli.run import run
from strands_durable.cli.sessions import sessions_app
from strands_durable.cli.temporal import worker
from strands_durable.errors import DurableError, ExitCode

app = typer.Typer(
    name="strands",
    help="Run strands-cli v0 workflow specs durably: every step, model turn and tool result survives a crash.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click help: starts in a third of the time (no rich markdown import)
)
app.command("run")(run)
app.add_typer(sessions_app, name="sessions")
app.command("chaos")(chaos)
app.command(CHAOS_BACKEND, hidden=True)(chaos_backend)  # `strands chaos backend`: see _run_command
app.command("worker")(worker)


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

    Schema and internal references; exit 3 with one line naming file, key path and line. What would stop a
    run before its session exists (unknown providers, tools that cannot run here, template names that are
    neither an input nor a context name) is printed as warnings; they keep exit 0.
    """
    from strands_durable.spec import load_spec

    try:
        loaded = load_spec(spec)
    except DurableError as exc:
        fail(exc)
    for warning in loaded.warnings:
        print(f"Warning: {warning}", file=sys.stderr)
    from strands_durable.runner.preflight import findings, unknown_tools
    from strands_durable.runner.tools import unknown_tool_text

    for finding in findings(loaded, [*loaded.inputs.declared(), *loaded.inputs.values]):
        print(f"Warning: {finding.detail} (a run stops here with exit {int(finding.exit_code)})", file=sys.stderr)
    for name, where in unknown_tools(loaded).items():
        print(f"Warning: {unknown_tool_text(name, where)}", file=sys.stderr)
    print(f"✓ {spec}: valid spec for workflow '{loaded.name}' (pattern: {loaded.pattern.type})")


def main() -> None:
    stdout = WatchedStdout(sys.stdout)
    sys.stdout = stdout  # type: ignore[assignment]
    try:
        code = _run_command()
    except BrokenPipeError:  # raised past every command (a run stops at a safe point instead)
        code = int(ExitCode.SIGPIPE)
    except SystemExit:  # click ends a command whose output failed with exit 1: the reader went away
        if not stdout.reader_gone:
            raise
    stdout.finish()
    if stdout.reader_gone:  # whichever command, whatever it returned: a closed stdout is exit 141, no error
        code = int(ExitCode.SIGPIPE)
    if "temporalio.bridge.temporal_sdk_bridge" in sys.modules:  # its Rust threads can abort a normal shutdown
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _run_command() -> int:
    try:
        command = typer.main.get_command(app)
        plain_help(command)
        code = command(args=_routed(sys.argv[1:]), standalone_mode=False)
    except KeyboardInterrupt:
        return int(ExitCode.SIGINT)
    except typer.Abort:
        print("Aborted.", file=sys.stderr)
        return int(ExitCode.SIGINT)
    except typer.TyperException as exc:  # click's own usage errors: one line too, like every other error
        return usage_failure(exc)
    except BrokenPipeError:
        raise  # main(): a closed stdout is exit 141, not an I/O failure
    except Exception as exc:  # escaped a command: one line, exit 12 for an OSError, else 70 (a bug)
        return report_failure(exc)
    return code if isinstance(code, int) else 0


def _routed(args: list[str]) -> list[str]:
    """`chaos backend ...` names the backend gate's command (`chaos SPEC...` stays the soak)."""
    first = next((i for i, arg in enumerate(args) if not arg.startswith("-")), None)
    if first is not None and args[first : first + 2] == ["chaos", "backend"]:
        return [*args[:first], CHAOS_BACKEND, *args[first + 2 :]]
    return args


def plain_help(command: Any) -> None:
    """Help and usage show an argument by its name (`ID`, `SPEC...`), not typer's `{ID}` and `<list[Path]>`."""
    for param in getattr(command, "params", ()):
        if param.param_type_name == "option" and param.metavar is None and not param.is_flag:
            param.metavar = (param.name or "value").upper()  # `--strategy STRATEGY`, never `<str>`
        if param.param_type_name == "argument":
            name = (param.metavar or param.name or "").upper()
            shown = name + ("..." if param.nargs != 1 else "")
            usage = shown if param.required else f"[{shown}]"
            param.display_type_rich = lambda ctx: None
            param._rich_display_name = lambda shown=shown: shown
            param._usage_display_name = lambda usage=usage: usage
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)


def _no_such_option(exc: Any) -> str:
    """click's message suggests any option at all (`--bogus` -> `--out`); only a near miss is worth naming."""
    import difflib

    name = str(exc.option_name)
    close = difflib.get_close_matches(name, list(exc.possibilities or ()), n=1, cutoff=0.75)
    return f"No such option: {name}" + (f" (did you mean {close[0]}?)" if close else "")


def usage_failure(exc: typer.TyperException) -> int:
    """Print a flag or argument error as one `Error:` line (with where to find help); return its exit code."""
    code = int(getattr(exc, "exit_code", ExitCode.USAGE))
    if type(exc).__name__ == "NoArgsIsHelpError":  # `strands sessions` alone: the help is the answer
        ctx = getattr(exc, "ctx", None)
        print(ctx.get_help() if ctx is not None else str(exc))
        return 0
    format_message = getattr(exc, "format_message", None)
    message = format_message() if callable(format_message) else str(exc)
    if type(exc).__name__ == "NoSuchOption":
        message = _no_such_option(exc)
    ctx = getattr(exc, "ctx", None)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    print(f"Error: {message}{hint}", file=sys.stderr)
    return code


__all__ = ["app", "fail", "main"]
