"""Session storage: one commit-based interface (`SessionStore`, `Session`) with local-file and memory stores."""

from strands_durable.store.base import Session, SessionStore, SessionSummary
from strands_durable.store.fileops import FileOps
from strands_durable.store.local import LocalSession, LocalStore
from strands_durable.store.memory import MemoryStore
from strands_durable.store.state import Conversation, SessionState

__all__ = [
    "Conversation",
    "FileOps",
    "LocalSession",
    "LocalStore",
    "MemoryStore",
    "Session",
    "SessionState",
    "SessionStore",
    "SessionSummary",
]
