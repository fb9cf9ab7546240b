"""Session storage: one commit-based interface (`SessionStore`, `Session`), the `open_store` factory, the local-file
and memory stores, and `WrappingStore` to observe or fault any of them. docs/storage.md describes the contract."""

from strands_durable.store import events
from strands_durable.store.base import (
    Finding,
    Inspection,
    LeaseHolder,
    Session,
    SessionStore,
    SessionSummary,
    Workspace,
)
from strands_durable.store.factory import open_store
from strands_durable.store.fileops import FileOps
from strands_durable.store.local import LocalStore
from strands_durable.store.memory import MemoryStore
from strands_durable.store.state import Conversation, SessionState
from strands_durable.store.wrapping import CommitCall, WrappingStore

__all__ = [
    "CommitCall",
    "Conversation",
    "FileOps",
    "Finding",
    "Inspection",
    "LeaseHolder",
    "LocalStore",
    "MemoryStore",
    "Session",
    "SessionState",
    "SessionStore",
    "SessionSummary",
    "Workspace",
    "WrappingStore",
    "events",
    "open_store",
]
