"""Session operations behind `strands sessions ...`: export, check, repair, cleanup and finding a session to resume.

Core functions over a `SessionStore`; the CLI only parses flags and prints what these return.
"""

from strands_durable.operations.check import Problem, check_session
from strands_durable.operations.cleanup import (
    RETENTION_ENV,
    CleanupReport,
    apply_retention,
    cleanup_sessions,
    parse_age,
    retention_from_env,
)
from strands_durable.operations.export import export_session
from strands_durable.operations.repair import ConversationRepair, RepairReport, repair_session
from strands_durable.operations.resumable import newest_unfinished

__all__ = [
    "RETENTION_ENV",
    "CleanupReport",
    "ConversationRepair",
    "Problem",
    "RepairReport",
    "apply_retention",
    "check_session",
    "cleanup_sessions",
    "export_session",
    "newest_unfinished",
    "parse_age",
    "repair_session",
    "retention_from_env",
]
