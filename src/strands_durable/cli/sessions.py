"""`strands sessions ...`: list, show, delete, cleanup, export, check and repair sessions.

Thin: each command resolves the id, calls a store method or an `operations` function and prints the result.
None of them imports strands-agents.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from strands_durable.cli.failure import fail
from strands_durable.errors import DurableError, ExitCode, SessionInUse, UsageError
from strands_durable.wording import counted

SESSIONS_HELP = "List, show, export, check, repair, delete and clean up saved sessions."
sessions_app = typer.Typer(
    name="sessions",
    help=SESSIONS_HELP,
    short_help=SESSIONS_HELP,  # `strands --help` says the same, never a shortened form
    no_args_is_help=True,
)

STATUSES = ("running", "paused", "completed", "failed", "idle", "corrupt")
STRATEGIES = ("synthesize", "drop")

SessionsDir = Annotated[
    str | None,  # a directory or an s3:// URL (a Path would fold its `//`)
    typer.Option("--sessions-dir", metavar="DIR", help="Where sessions live (default $STRANDS_SESSIONS_DIR)."),
]
JsonOutput = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table or panel.")]


def complete_session_id(ctx: typer.Context, incomplete: str) -> list[str]:
    """Shell completion of a session id: the ids in the command's sessions directory (`--sessions-dir` when it
    is already on the line, else $STRANDS_SESSIONS_DIR) that start with what is typed."""
    try:
        ids = open_store(ctx.params.get("sessions_dir")).session_ids()
    except Exception:  # completion never prints an error into the user's shell
        return []
    return sorted(session_id for session_id in ids if session_id.startswith(incomplete))


SessionId = Annotated[
    str,
    typer.Argument(
        metavar="ID", help="Session id, or a unique prefix of 8+ characters.", autocompletion=complete_session_id
    ),
]
StrandsSdkDir = Annotated[
    Path | None,
    typer.Option(
        "--strands-sdk",
        metavar="DIR",
        help="Work on the Strands SDK's FileSessionManager session ID in DIR (its storage_dir) instead.",
    ),
]

F = TypeVar("F", bound=Callable[..., Any])


def reports_errors(command: F) -> F:
    """Turn a DurableError or OSError raised by a command into the one-line error and its exit code."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except BrokenPipeError:  # stdout's reader went away: not an I/O failure of the store (cli/closed_stdout.py)
            raise
        except (DurableError, OSError) as exc:
            fail(exc)

    return wrapper  # type: ignore[return-value]


def open_store(sessions_dir: str | None) -> Any:
    from strands_durable.store.factory import open_store as open_sessions

    return open_sessions(sessions_dir)


def print_json(document: Any) -> None:
    print(json.dumps(document, indent=2, ensure_ascii=False))


def confirm(question: str) -> bool:
    """Ask on stdout, read a line from stdin; anything but y/yes (or end of input) is no."""
    print(f"{question} [y/N]: ", end="", flush=True)
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        answer = ""
    if not answer.endswith("\n"):
        print()
    return answer.strip().lower() in ("y", "yes")


def checked_statuses(given: list[str] | None) -> set[str] | None:
    """The statuses `--status` names (repeatable), None when not given; an unknown one is a usage error."""
    for name in given or ():
        if name not in STATUSES:
            raise UsageError(f"--status: unknown status {name!r} (expected one of: {', '.join(STATUSES)})")
    return set(given) if given else None


@sessions_app.command("list")
@reports_errors
def list_sessions(
    status: Annotated[
        list[str] | None,
        typer.Option(
            "--status",
            metavar="STATUS",
            help="Only running, paused, completed, failed, idle or corrupt (repeatable).",
        ),
    ] = None,
    json_output: JsonOutput = False,
    sessions_dir: SessionsDir = None,
    temporal: Annotated[
        bool, typer.Option("--temporal", help="Also ask each Temporal run's server for its workflow status.")
    ] = False,
) -> None:
    """List sessions, newest first.

    A running session whose process died shows as `running (stale)`; it can be resumed. Offline by default:
    `--temporal` adds a column with each Temporal run's workflow status, asked of its server (a few seconds at
    most per server; `unreachable` when it does not answer).
    """
    from strands_durable.cli.session_views import sessions_table, summary_json

    statuses = checked_statuses(status)
    store = open_store(sessions_dir)
    summaries = [s for s in store.list() if statuses is None or s.status in statuses]
    workflows = _workflow_statuses(store, [s.session_id for s in summaries]) if temporal else None
    if json_output:
        print_json([summary_json(s, (workflows or {}).get(s.session_id)) for s in summaries])
    elif not summaries:
        print(f"No {' or '.join(dict.fromkeys(status or ()))} sessions found." if status else "No sessions found.")
    else:
        print(sessions_table(summaries, workflows))


def _workflow_statuses(store: Any, session_ids: list[str]) -> dict[str, Any]:
    """The workflow status of each of these sessions that runs on Temporal (read from its metadata)."""
    from strands_durable.temporal.status import temporal_engine, workflow_statuses

    runs = []
    for session_id in session_ids:
        try:
            engine = temporal_engine(store.load(session_id).meta)
        except DurableError:  # a session that cannot be read now is listed as the store sees it, without a status
            continue
        if engine is not None:
            runs.append((session_id, engine))
    return workflow_statuses(runs)


@sessions_app.command("show")
@reports_errors
def show(session_id: SessionId, json_output: JsonOutput = False, sessions_dir: SessionsDir = None) -> None:
    """Show one session in detail.

    Ids, workflow, status, times, variables, token usage and pattern state; for a run on Temporal, the
    workflow's own status as its server reports it (`unreachable` after a few seconds without an answer).
    """
    from strands_durable.cli.session_views import console, session_panel, show_json
    from strands_durable.temporal.status import temporal_engine, workflow_statuses

    store = open_store(sessions_dir)
    full_id = store.resolve(session_id)
    state = store.load(full_id)
    holder = store.holder(full_id)
    units = store.unit_holders(full_id) if store.unit_leases else []
    engine = temporal_engine(state.meta)
    workflow = workflow_statuses([(full_id, engine)])[full_id] if engine else None  # asks the run's server
    if json_output:
        print_json(show_json(state, holder, workflow, units))
    else:
        console().print(session_panel(state, holder, workflow, units))


@sessions_app.command("delete")
@reports_errors
def delete(
    session_id: SessionId,
    force: Annotated[bool, typer.Option("--force", "--yes", "-y", help="Do not ask for confirmation.")] = False,
    sessions_dir: SessionsDir = None,
) -> None:
    """Delete a session.

    Asks first unless --force (or --yes, -y); refuses a session a live process holds (exit 17). Never follows a
    symbolic link out of the session; a delete that was cut short is finished first.
    """
    from strands_durable.cli.session_views import short_id

    store = open_store(sessions_dir)
    stuck: list[tuple[str, DurableError]] = []
    finished = store.finish_interrupted_deletes(stuck)
    for finished_id in finished:
        print(f"✓ Finished an interrupted delete of session {finished_id}")
    if any(finished_id.startswith(session_id.strip()) for finished_id in finished):
        return
    for stuck_id, exc in stuck:
        if stuck_id.startswith(session_id.strip()):
            fail(exc)  # the session asked for is the one whose delete cannot be finished
        _warn_stuck(exc)
    full_id = store.resolve(session_id)
    holder = store.holder(full_id)
    if holder is not None:
        raise SessionInUse(full_id, holder.pid, holder.host, owner=holder.owner)
    if not force and not confirm(f"Delete session {short_id(full_id)}?"):
        print("Not deleted.", file=sys.stderr)
        return
    store.delete(full_id)
    print(f"✓ Deleted session {full_id}")


@sessions_app.command("cleanup")
@reports_errors
def cleanup(
    older_than: Annotated[
        str, typer.Option("--older-than", metavar="AGE", help="Not updated for this long: 30m, 12h, 7d, 2w.")
    ] = "7d",
    status: Annotated[
        list[str] | None,
        typer.Option("--status", metavar="STATUS", help="Only sessions with this status (repeatable)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", "--yes", "-y", help="Do not ask for confirmation.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would be deleted.")] = False,
    sessions_dir: SessionsDir = None,
) -> None:
    """Delete sessions not updated for a while.

    Never one a live process holds. Set STRANDS_SESSIONS_RETENTION (e.g. 7d) to do this after every run.
    """
    from strands_durable.operations import parse_age

    age = parse_age(older_than)
    statuses = checked_statuses(status)
    store = open_store(sessions_dir)
    stuck: list[tuple[str, DurableError]] = []
    for finished_id in [] if dry_run else store.finish_interrupted_deletes(stuck):
        print(f"✓ Finished an interrupted delete of session {finished_id}")
    failed = _cleanup(store, age, older_than, statuses, dry_run=dry_run, force=force)
    errors = [exc for _, exc in stuck] + failed  # after the others were deleted: one error line, exit 12
    if errors:
        fail(not_deleted(errors))


def _warn_stuck(exc: DurableError) -> None:
    print(f"⚠ Warning: an interrupted delete could not be finished: {exc}", file=sys.stderr)


def _cleanup(store: Any, age: Any, older_than: str, statuses: Any, *, dry_run: bool, force: bool) -> list[Any]:
    """`sessions cleanup` once the deletes cut short are finished: what it lists, asks and deletes; the errors of
    the sessions it could not delete."""
    from strands_durable.operations import cleanup_sessions

    plan = cleanup_sessions(store, age, statuses, dry_run=True)
    for summary, why in plan.skipped:
        print(f"Keeping {summary.session_id} ({summary.workflow_name}): {why}")
    if not plan.deleted:
        print(f"No sessions older than {older_than} to delete.")
        return []
    for summary in plan.deleted:
        print(
            f"{'Would delete' if dry_run else 'To delete'}: {summary.session_id} ({summary.workflow_name}, "
            f"{summary.display_status})"
        )
    if dry_run:
        return []
    if not force and not confirm(f"Delete {counted(len(plan.deleted), 'session')}?"):
        print("Nothing deleted.", file=sys.stderr)
        return []
    wanted = {s.session_id for s in plan.deleted}
    report = cleanup_sessions(store, age, statuses, finish_deletes=False)  # finished (or not) above
    for summary, why in report.skipped:
        if summary.session_id in wanted:
            print(f"Kept {summary.session_id}: {why}")
    print(f"✓ Deleted {counted(len(report.deleted), 'session')}")
    return [exc for _, exc in report.failed]


def not_deleted(errors: list[DurableError]) -> DurableError:
    """One error for the sessions a cleanup could not delete, as `sessions delete` reports one: the error itself,
    or all their messages on one line with the first one's exit code (12 for an I/O failure)."""
    if len(errors) == 1:
        return errors[0]
    combined = DurableError("; ".join(str(exc) for exc in errors))
    combined.exit_code = errors[0].exit_code
    return combined


@sessions_app.command("export")
@reports_errors
def export(session_id: SessionId, sessions_dir: SessionsDir = None) -> None:
    """Print a session as one JSON document.

    Keys: session, pattern_state, outputs, agents, journal.
    """
    from strands_durable.operations import export_session

    print_json(export_session(open_store(sessions_dir), session_id))


@sessions_app.command("check")
@reports_errors
def check(session_id: SessionId, sessions_dir: SessionsDir = None, strands_sdk: StrandsSdkDir = None) -> None:
    """Check a session's files and histories.

    Journal integrity, stored histories and readable files against the journal; exit 1 on violations.
    With --strands-sdk DIR: what a provider would reject in a FileSessionManager session's histories.
    """
    from strands_durable.operations import check_session

    if strands_sdk is not None:
        check_sdk_session(strands_sdk, session_id)
        return

    store = open_store(sessions_dir)
    full_id = store.resolve(session_id)
    problems = check_session(store, full_id)
    errors = [p for p in problems if p.severity == "error"]
    for problem in problems:
        print(problem)
    if errors:
        print(f"✗ Session {full_id}: {len(errors)} violation(s)")
        raise typer.Exit(int(ExitCode.CHECK_VIOLATIONS))
    warnings = len(problems)
    print(f"✓ Session {full_id}: no violations" + (f" ({warnings} warning(s))" if warnings else ""))


@sessions_app.command("repair")
@reports_errors
def repair(
    session_id: SessionId,
    strategy: Annotated[
        str,
        typer.Option("--strategy", help="For a call without a result: synthesize an error result, or drop the call."),
    ] = "synthesize",
    sessions_dir: SessionsDir = None,
    strands_sdk: StrandsSdkDir = None,
    force: Annotated[bool, typer.Option("--force", help="With --strands-sdk: repair files changed recently.")] = False,
) -> None:
    """Repair invalid stored conversation histories.

    Writes a new generation per changed conversation; the old message files move to backups/.
    With --strands-sdk DIR: rebuild a FileSessionManager session's broken agent directories (old ones kept in
    backups/).
    """
    from strands_durable.operations import repair_session

    if strands_sdk is not None:
        repair_sdk_session(strands_sdk, session_id, force=force)
        return

    if strategy not in STRATEGIES:
        raise UsageError(f"--strategy: unknown strategy {strategy!r} (expected synthesize or drop)")
    store = open_store(sessions_dir)
    full_id = store.resolve(session_id)
    report = repair_session(store, full_id, strategy)  # type: ignore[arg-type]
    if not report.changed:
        print(f"✓ Session {full_id}: nothing to repair (histories valid, readable files match the journal)")
        return
    for item in report.conversations:
        backup = f"; previous files in {item.backup}" if item.backup else ""
        print(
            f"agents/{item.conversation}: generation {item.generation}, "
            f"{item.messages_before} -> {item.messages_after} messages{backup}"
        )
        for action in item.actions:
            print(f"  - {action}")
    for where in report.rewritten:
        print(f"{where}: written again from the journal")
    parts = []
    if report.conversations:
        parts.append(f"repaired {len(report.conversations)} conversation(s)")
    if report.rewritten:
        parts.append(f"rewrote {len(report.rewritten)} readable file(s)")
    print(f"✓ Session {full_id}: {', '.join(parts)}")


def check_sdk_session(root: Path, session_id: str) -> None:
    from strands_durable.sdk.file_sessions import check_file_session

    found = check_file_session(root, session_id)
    count = 0
    for agent_id, problems in found.items():
        for problem in problems:
            print(f"agents/agent_{agent_id}: {problem}")
            count += 1
    if count:
        print(f"✗ FileSessionManager session {session_id}: {count} violation(s)")
        raise typer.Exit(int(ExitCode.CHECK_VIOLATIONS))
    print(f"✓ FileSessionManager session {session_id}: no violations")


def repair_sdk_session(root: Path, session_id: str, *, force: bool) -> None:
    from strands_durable.sdk.file_sessions import repair_file_session

    report = repair_file_session(root, session_id, force=force)
    if not report.repaired:
        print(f"✓ FileSessionManager session {session_id}: nothing to repair")
        return
    for agent_id, (before, after) in report.repaired.items():
        print(f"agents/agent_{agent_id}: {before} -> {after} messages; previous files in {report.backup}")
    print(f"✓ FileSessionManager session {session_id}: repaired {len(report.repaired)} agent(s)")
