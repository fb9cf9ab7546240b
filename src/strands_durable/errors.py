"""Error types and the one table that maps them to process exit codes (README documents it)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    CHECK_VIOLATIONS = 1
    USAGE = 2
    SPEC_INVALID = 3
    RUNTIME = 10
    IO = 12
    SESSION_UNUSABLE = 17
    UNSUPPORTED = 18
    HITL_PAUSED = 19
    BUDGET_EXCEEDED = 20
    CHAOS_INCOMPLETE = 21  # `strands chaos`: a (fault class, spec) pair did not run; nothing found in what ran
    UNEXPECTED = 70
    SIGINT = 130
    SIGPIPE = 141  # stdout closed (`strands run ... | head -1`): stopped like SIGTERM
    SIGTERM = 143


class DurableError(Exception):
    """Base class for every error a user can cause or fix; carries its exit code and a one-line message."""

    exit_code: ExitCode = ExitCode.UNEXPECTED

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(DurableError):
    exit_code = ExitCode.USAGE


class SessionNotFound(UsageError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"Session not found: {session_id}")
        self.session_id = session_id


class SessionExists(UsageError):
    """A new session was asked for with an id a session already has (another process may have just created it)."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"Session already exists: {session_id}")
        self.session_id = session_id


class SessionCompleted(UsageError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"Session already completed: {session_id}")
        self.session_id = session_id


class SpecError(DurableError):
    """A spec that does not load or validate: the message names the file, the key path and the line."""

    exit_code = ExitCode.SPEC_INVALID

    def __init__(self, file: str, detail: str, *, key_path: str | None = None, line: int | None = None):
        where = file
        if line is not None:
            where += f":{line}"
        if key_path:
            where += f": {key_path}"
        super().__init__(f"{where}: {detail}")
        self.file = file
        self.key_path = key_path
        self.line = line
        self.detail = detail


class WorkflowFailed(DurableError):
    """A model, tool or provider failure that survived the retry policy."""

    exit_code = ExitCode.RUNTIME


class TurnLimitExceeded(WorkflowFailed):
    """An agent unit took more tool turns in one invocation than the Strands event loop can recurse (it calls
    itself once per turn: about 310 turns under Python's default recursion limit). Every turn made is committed,
    so a resume goes on from the last one (exit 10, like any runtime failure)."""

    def __init__(self, unit: str, turns: int, session_id: str) -> None:
        super().__init__(
            f"{unit}: the agent took more tool turns in one invocation than the Strands event loop allows (it "
            f"recurses once per turn: about {TURN_LIMIT}); its {turns} turns so far are committed: `strands run "
            f"--resume {session_id}` goes on from the last one (about {TURN_LIMIT} more per resume), or give the "
            "agent a task that needs fewer tool calls"
        )
        self.unit = unit
        self.turns = turns


TURN_LIMIT = 310
"""About how many tool turns one agent invocation can take before the Strands event loop, which recurses once per
turn, reaches Python's default recursion limit (measured: 314 turns of one tool call each)."""


class StorageIOError(DurableError):
    """Disk full, permission denied, read-only file system, an artifact that cannot be written."""

    exit_code = ExitCode.IO


class S3BucketMissing(StorageIOError):
    def __init__(self, bucket: str, endpoint: str) -> None:
        super().__init__(f"S3 bucket not found: {bucket} (endpoint {endpoint})")
        self.bucket = bucket


class S3AccessDenied(StorageIOError):
    """Refused credentials (unknown key, bad secret, none found) or a policy that denies the request."""

    def __init__(self, bucket: str, endpoint: str, reason: str) -> None:
        super().__init__(f"Access denied to S3 bucket {bucket} at {endpoint}: {reason}")
        self.bucket = bucket


class S3EndpointUnreachable(StorageIOError):
    def __init__(self, endpoint: str, bucket: str) -> None:
        super().__init__(f"S3 endpoint unreachable: {endpoint} (bucket {bucket})")
        self.endpoint = endpoint


class S3EndpointNotS3(StorageIOError):
    """The endpoint answered, but not as S3 does: a web server's error page, a redirect (`AWS_ENDPOINT_URL_S3`
    probably names the wrong server or port)."""

    def __init__(self, endpoint: str, bucket: str, what: str, status: int) -> None:
        super().__init__(
            f"S3 endpoint {endpoint} does not answer as S3 (HTTP {status} to {what}, bucket {bucket}): check "
            "AWS_ENDPOINT_URL_S3"
        )
        self.endpoint = endpoint
        self.status = status


class S3DeadlineExceeded(StorageIOError):
    """One S3 operation (a read, a list page, a write and the read-backs that settle it) did not finish within its
    deadline, STRANDS_S3_DEADLINE seconds: a stalled or unreachable server."""

    def __init__(self, what: str, endpoint: str, bucket: str, deadline_s: float) -> None:
        where = f"{endpoint} (bucket {bucket}; the deadline is STRANDS_S3_DEADLINE)"
        super().__init__(f"S3 {what} did not finish within {deadline_s:g} s at {where}")
        self.endpoint = endpoint
        self.deadline_s = deadline_s


class TemporalUnreachable(DurableError):
    """The Temporal server of `--temporal HOST:PORT` cannot be reached (exit 12, like an unreachable bucket)."""

    exit_code = ExitCode.IO

    def __init__(self, address: str, namespace: str, reason: str) -> None:
        super().__init__(f"Temporal server unreachable: {address} (namespace {namespace}): {reason}")
        self.address = address
        self.reason = reason


class SessionFenced(DurableError):
    """This process's lease on a session was taken over by another process, which fenced out our commits."""

    exit_code = ExitCode.SESSION_UNUSABLE

    def __init__(self, session_id: str, detail: str) -> None:
        super().__init__(f"Session {session_id} was taken over by another process (fenced out): {detail}")
        self.session_id = session_id


class SessionInUse(DurableError):
    """Another process holds the session. A lease that lapses on its own (S3) says when (`free_at`, epoch seconds,
    by the clock `now` read): a holder that died frees the session then, and a resume works."""

    exit_code = ExitCode.SESSION_UNUSABLE

    def __init__(
        self,
        session_id: str,
        pid: int,
        host: str,
        *,
        owner: str | None = None,
        free_at: float | None = None,
        now: float | None = None,
    ) -> None:
        holder = owner if owner else f"pid {pid} on host {host}"  # owner: a store's opaque holder (S3: a worker)
        message = f"Session {session_id} is in use by {holder}"
        if free_at is not None:
            import time

            wait = max(0.0, free_at - (time.time() if now is None else now))
            message += (
                f"; its lease expires at {time.strftime('%H:%M:%S', time.localtime(free_at))} (in {wait:.0f} s) "
                "unless that process renews it: if it is gone, the resume works then"
            )
        super().__init__(message)
        self.session_id = session_id
        self.pid = pid
        self.host = host
        self.owner = owner
        self.free_at = free_at


class SessionChanged(DurableError):
    """The session is no longer the one this process holds: its directory was deleted or replaced under it, or
    (Python agents) another process extended it while this agent held messages it had not stored."""

    exit_code = ExitCode.SESSION_UNUSABLE


class CorruptSession(DurableError):
    exit_code = ExitCode.SESSION_UNUSABLE

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(f"Corrupt session file {path}: {detail}")
        self.path = path
        self.detail = detail


class SessionUnreadable(DurableError):
    """A session folder or file this process may not read (mode 000, another user's): the session is unusable
    here (exit 17), and `sessions list` shows it as `corrupt (<file>: permission denied)`."""

    exit_code = ExitCode.SESSION_UNUSABLE

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(f"Cannot read session file {path}: {detail}")
        self.path = path
        self.detail = detail


class Unsupported(DurableError):
    """A feature, key or tool we cannot provide here; the message names it."""

    exit_code = ExitCode.UNSUPPORTED


class HitlPaused(DurableError):
    exit_code = ExitCode.HITL_PAUSED


class BudgetExceeded(DurableError):
    exit_code = ExitCode.BUDGET_EXCEEDED


def exit_code_for(exc: BaseException) -> int:
    """The process exit code for an exception that reached the top of a command."""
    if isinstance(exc, DurableError):
        return int(exc.exit_code)
    if isinstance(exc, KeyboardInterrupt):
        return int(ExitCode.SIGINT)
    if isinstance(exc, OSError):
        return int(ExitCode.IO)
    return int(ExitCode.UNEXPECTED)
