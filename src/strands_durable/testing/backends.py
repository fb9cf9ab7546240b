"""Backends for the backend gate (`strands chaos backend`, docs/backends.md): correct reference ones, and seeded
bugs, each breaking one clause of the gate, with which the gate proves itself (tests/faults/test_backend_matrix.py).

Every factory takes the gate's context (`ctx.directory`, `ctx.session_id`). The references write one file per
record through the project's file layer (temp file, fsync, rename, directory fsync) and create exclusively:

- `ReferenceRepository`: a `SessionRepository` meeting every repository clause (the gate drives it through the
  SDK's `RepositorySessionManager`, and blames that layer for what fails over it too);
- `ReferenceStorage`: a `Storage` meeting every storage clause (driven through `SnapshotSessionManager`).

The seeded bugs (`SEEDED`: factory name -> the clause it breaks):

- `ForgetfulRepository`: forgets the last message of an exchange when the next prompt arrives
  (`acknowledged-not-lost`);
- `WriteBehindRepository`: keeps an exchange's messages in memory until its final answer (`durable-per-message`);
- `MemoryIdRepository`: numbers messages with a counter kept in memory, from 0 in every process
  (`ids-not-reused`);
- `OwnIdsRepository`: refuses a message id only when this process created it, so it silently overwrites
  another process's message (`two-resumers`: the second of two resumers to store its prompt replaces the first's);
- `CheckThenPutRepository`: creates a session by checking that it is missing, then writing it
  (`repository-create-exclusive`);
- `TearingStorage`: writes a value in place, chunk by chunk (`storage-write-atomic`);
- `HangingSessionManager`: our manager, hanging when it restores an interrupted invocation (`liveness`);
- `rerunning_manager`: our manager forgetting a tool's recorded result when it is called again
  (`tool-results-once`);
- `StaleLockSessionManager`: our manager, creating a new session under a lock file that a creator killed in the
  middle leaves behind, so every later open fails (`valid-history`: the resume fails; shown only by the gate's
  kills inside the factory call, `factory/kill@IofN`);
- `ProgressForgettingManager`: our manager, not saving a Graph's or Swarm's progress after each node
  (`nodes-not-rerun`);
- `DetachingSessionManager`: our manager, going on in memory when another process holds the session (its lease
  refused), so the second of two resumers returns as if what it sent were stored (`two-resumers`).
"""

from __future__ import annotations

import builtins
import json
import os
import threading
from pathlib import Path
from typing import Any

from strands_durable.store.fileops import FileOps

_ops = FileOps()


def _write(path: Path, record: Any) -> None:
    _ops.makedirs(path.parent)
    _ops.write_atomic(path, json.dumps(record).encode())


def _read(path: Path) -> Any:
    return json.loads(path.read_bytes()) if path.exists() else None


def _publish(directory: Path, name: str, record: Any) -> bool:
    """Create `directory` holding the file `name` with `record`, whole and exclusively: written in a staging
    directory renamed into place (a rename onto a directory that holds anything fails), so of two processes
    creating one record at once exactly one succeeds, and a creator killed in the middle leaves nothing under the
    record's name. False when the record exists."""
    _ops.makedirs(directory.parent)
    # one staging directory per creating thread (a killed creator's is left over, and cleared by its successor)
    staging = directory.with_name(f".creating-{directory.name}-{os.getpid()}-{threading.get_ident()}")
    if staging.exists():
        _ops.remove_tree(staging)
    _ops.mkdir(staging)
    _write(staging / name, record)
    try:
        _ops.rename(staging, directory)
    except OSError:
        _ops.remove_tree(staging)
        return False
    _ops.fsync_dir(directory.parent)
    return True


def _repository_base() -> type:
    from strands.session.session_repository import SessionRepository

    return SessionRepository


class ReferenceRepository(_repository_base()):  # type: ignore[misc]
    """A `SessionRepository` of files under `directory`: every write durable before it returns, sessions, agents
    and messages created exclusively; a session appears whole (its record written in a staging directory renamed
    into place), so a creator killed in the middle leaves no half-made session."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    # -- paths --
    def _session(self, session_id: str) -> Path:
        return self.directory / f"session_{session_id}"

    def _agent(self, session_id: str, agent_id: str) -> Path:
        return self._session(session_id) / "agents" / f"agent_{agent_id}"

    def _messages(self, session_id: str, agent_id: str) -> Path:
        return self._agent(session_id, agent_id) / "messages"

    def _message(self, session_id: str, agent_id: str, message_id: int) -> Path:
        return self._messages(session_id, agent_id) / f"message_{message_id}" / "message.json"

    def _multi_agent(self, session_id: str, multi_agent_id: str) -> Path:
        return self._session(session_id) / "multi_agents" / f"{multi_agent_id}.json"

    # -- sessions --
    def create_session(self, session: Any, **kwargs: Any) -> Any:
        from strands.types.exceptions import SessionException

        directory = self._session(session.session_id)
        if directory.exists() or not _publish(directory, "session.json", session.to_dict()):
            raise SessionException(f"Session {session.session_id} already exists")
        return session

    def read_session(self, session_id: str, **kwargs: Any) -> Any:
        from strands.types.session import Session

        data = _read(self._session(session_id) / "session.json")
        return Session.from_dict(data) if data is not None else None

    # -- agents --
    def create_agent(self, session_id: str, session_agent: Any, **kwargs: Any) -> None:
        from strands.types.exceptions import SessionException

        path = self._agent(session_id, session_agent.agent_id) / "agent.json"
        if path.exists() or not _publish(path.parent, path.name, session_agent.to_dict()):
            raise SessionException(f"Agent {session_agent.agent_id} already exists in session {session_id}")

    def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> Any:
        from strands.types.session import SessionAgent

        data = _read(self._agent(session_id, agent_id) / "agent.json")
        return SessionAgent.from_dict(data) if data is not None else None

    def update_agent(self, session_id: str, session_agent: Any, **kwargs: Any) -> None:
        from strands.types.exceptions import SessionException

        path = self._agent(session_id, session_agent.agent_id) / "agent.json"
        previous = _read(path)
        if previous is None:
            raise SessionException(f"Agent {session_agent.agent_id} in session {session_id} does not exist")
        session_agent.created_at = previous["created_at"]
        _write(path, session_agent.to_dict())

    # -- messages --
    def create_message(self, session_id: str, agent_id: str, session_message: Any, **kwargs: Any) -> None:
        from strands.types.exceptions import SessionException

        path = self._message(session_id, agent_id, session_message.message_id)
        if path.exists() or not _publish(path.parent, path.name, session_message.to_dict()):
            raise SessionException(f"Message {session_message.message_id} of agent {agent_id} already exists")

    def read_message(self, session_id: str, agent_id: str, message_id: int, **kwargs: Any) -> Any:
        from strands.types.session import SessionMessage

        data = _read(self._message(session_id, agent_id, message_id))
        return SessionMessage.from_dict(data) if data is not None else None

    def update_message(self, session_id: str, agent_id: str, session_message: Any, **kwargs: Any) -> None:
        from strands.types.exceptions import SessionException

        path = self._message(session_id, agent_id, session_message.message_id)
        previous = _read(path)
        if previous is None:
            raise SessionException(f"Message {session_message.message_id} of agent {agent_id} does not exist")
        session_message.created_at = previous["created_at"]
        _write(path, session_message.to_dict())

    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> list[Any]:
        from strands.types.session import SessionMessage

        directory = self._messages(session_id, agent_id)
        if not directory.exists():
            return []
        paths = sorted(directory.glob("message_*"), key=lambda p: int(p.name.split("_")[1]))
        chosen = paths[offset : None if limit is None else offset + limit]
        return [SessionMessage.from_dict(json.loads((p / "message.json").read_bytes())) for p in chosen]

    # -- multi-agent records --
    def create_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        _write(self._multi_agent(session_id, multi_agent.id), multi_agent.serialize_state())

    def read_multi_agent(self, session_id: str, multi_agent_id: str, **kwargs: Any) -> dict[str, Any] | None:
        return _read(self._multi_agent(session_id, multi_agent_id))

    def update_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        _write(self._multi_agent(session_id, multi_agent.id), multi_agent.serialize_state())


def _ends_exchange(message: dict[str, Any]) -> bool:
    """An assistant answer with no tool call: the last message of an exchange."""
    content = message.get("content", [])
    return message.get("role") == "assistant" and not any("toolUse" in block for block in content)


def _is_prompt(message: dict[str, Any]) -> bool:
    return message.get("role") == "user" and any("text" in block for block in message.get("content", []))


class ForgetfulRepository(ReferenceRepository):
    """Seeded bug (`acknowledged-not-lost`): when a new prompt is stored, the answer that ended the exchange before
    it is removed (as a store that keeps the latest record of a kind and loses one)."""

    def create_message(self, session_id: str, agent_id: str, session_message: Any, **kwargs: Any) -> None:
        if _is_prompt(session_message.message):
            stored = self.list_messages(session_id, agent_id)
            if stored and _ends_exchange(stored[-1].message):
                record = self._message(session_id, agent_id, stored[-1].message_id).parent
                _ops.remove_tree(record)
                _ops.fsync_dir(record.parent)
        super().create_message(session_id, agent_id, session_message, **kwargs)


class WriteBehindRepository(ReferenceRepository):
    """Seeded bug (`durable-per-message`): an exchange's messages wait in memory and are written together with
    its final answer."""

    def __init__(self, directory: str | Path) -> None:
        super().__init__(directory)
        self._buffer: builtins.list[tuple[str, str, Any]] = []

    def create_message(self, session_id: str, agent_id: str, session_message: Any, **kwargs: Any) -> None:
        from strands.types.exceptions import SessionException

        waiting = {(s, a, m.message_id) for s, a, m in self._buffer}
        path = self._message(session_id, agent_id, session_message.message_id)
        if path.exists() or (session_id, agent_id, session_message.message_id) in waiting:
            raise SessionException(f"Message {session_message.message_id} of agent {agent_id} already exists")
        self._buffer.append((session_id, agent_id, session_message))
        if _ends_exchange(session_message.message):
            self._flush()

    def _flush(self) -> None:
        buffered, self._buffer = self._buffer, []
        for session_id, agent_id, message in buffered:
            super().create_message(session_id, agent_id, message)

    def read_message(self, session_id: str, agent_id: str, message_id: int, **kwargs: Any) -> Any:
        self._flush()
        return super().read_message(session_id, agent_id, message_id)

    def list_messages(self, session_id: str, agent_id: str, *args: Any, **kwargs: Any) -> builtins.list[Any]:
        self._flush()
        return super().list_messages(session_id, agent_id, *args, **kwargs)

    def update_message(self, session_id: str, agent_id: str, session_message: Any, **kwargs: Any) -> None:
        self._flush()
        super().update_message(session_id, agent_id, session_message, **kwargs)


class MemoryIdRepository(ReferenceRepository):
    """Seeded bug (`ids-not-reused`): messages are numbered by a counter this object keeps in memory, from 0 in
    every process (the id the caller gives is claimed exclusively, and then not stored)."""

    def __init__(self, directory: str | Path) -> None:
        super().__init__(directory)
        self._next = 0

    def create_message(self, session_id: str, agent_id: str, session_message: Any, **kwargs: Any) -> None:
        from strands.types.exceptions import SessionException
        from strands.types.session import SessionMessage

        claims = self._agent(session_id, agent_id) / "claims"
        _ops.makedirs(claims)
        try:
            _ops.mkdir(claims / str(session_message.message_id))
        except FileExistsError:
            raise SessionException(f"Message {session_message.message_id} of agent {agent_id} already exists") from None
        record = SessionMessage.from_dict({**session_message.to_dict(), "message_id": self._next})
        name = f"{os.getpid()}-{self._next}"
        self._next += 1
        order = (
            len(list(self._messages(session_id, agent_id).glob("*.json")))
            if self._messages(session_id, agent_id).exists()
            else 0
        )
        _write(self._messages(session_id, agent_id) / f"{order:06d}-{name}.json", record.to_dict())

    def _find(self, session_id: str, agent_id: str, message_id: int) -> Path | None:
        directory = self._messages(session_id, agent_id)
        found = [p for p in sorted(directory.glob("*.json")) if json.loads(p.read_bytes())["message_id"] == message_id]
        return found[-1] if found else None

    def read_message(self, session_id: str, agent_id: str, message_id: int, **kwargs: Any) -> Any:
        from strands.types.session import SessionMessage

        path = self._find(session_id, agent_id, message_id)
        return SessionMessage.from_dict(json.loads(path.read_bytes())) if path is not None else None

    def update_message(self, session_id: str, agent_id: str, session_message: Any, **kwargs: Any) -> None:
        path = self._find(session_id, agent_id, session_message.message_id)
        if path is not None:
            _write(path, session_message.to_dict())

    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> builtins.list[Any]:
        from strands.types.session import SessionMessage

        directory = self._messages(session_id, agent_id)
        paths = sorted(directory.glob("*.json")) if directory.exists() else []
        chosen = paths[offset : None if limit is None else offset + limit]
        return [SessionMessage.from_dict(json.loads(p.read_bytes())) for p in chosen]


class OwnIdsRepository(ReferenceRepository):
    """Seeded bug (`two-resumers`): a message id is refused only when this process created it (the ids it keeps
    in memory), so an id another process stored is silently overwritten: of two resumers, the second to store its
    prompt replaces the first's, and both go on as if theirs were stored. One process alone meets every clause."""

    def __init__(self, directory: str | Path) -> None:
        super().__init__(directory)
        self._created: set[tuple[str, str, int]] = set()

    def create_message(self, session_id: str, agent_id: str, session_message: Any, **kwargs: Any) -> None:
        from strands.types.exceptions import SessionException

        key = (session_id, agent_id, session_message.message_id)
        if key in self._created:
            raise SessionException(f"Message {session_message.message_id} of agent {agent_id} already exists")
        self._created.add(key)
        path = self._message(session_id, agent_id, session_message.message_id)
        if not _publish(path.parent, path.name, session_message.to_dict()):
            _write(path, session_message.to_dict())  # another process's message: overwritten


class CheckThenPutRepository(ReferenceRepository):
    """Seeded bug (`repository-create-exclusive`): a session is created by checking that it is missing, then
    writing it (two processes that check at once both write)."""

    def create_session(self, session: Any, **kwargs: Any) -> Any:
        from strands.types.exceptions import SessionException

        if self.read_session(session.session_id) is not None:
            raise SessionException(f"Session {session.session_id} already exists")
        directory = self._session(session.session_id)
        _ops.makedirs(directory)
        _write(directory / "session.json", session.to_dict())
        return session


class ReferenceStorage:
    """A `Storage` (the SDK's protocol) of one file per key under `directory`; a write is durable and atomic
    (temp file, fsync, rename, directory fsync) before it returns."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        parts = [p for p in key.split("/") if p]
        if not parts or any(p in (".", "..") for p in parts):
            raise ValueError(f"invalid storage key {key!r}")
        return self.directory.joinpath(*parts[:-1], parts[-1] + ".value")

    async def write(self, key: str, data: bytes) -> None:
        path = self._path(key)
        _ops.makedirs(path.parent)
        _ops.write_atomic(path, data)

    async def read(self, key: str) -> bytes | None:
        path = self._path(key)
        return path.read_bytes() if path.exists() else None

    async def delete(self, key: str) -> None:
        path = self._path(key)
        if path.exists():
            _ops.remove(path)
            _ops.fsync_dir(path.parent)

    async def list(self, query: str = "") -> builtins.list[str]:
        if not self.directory.exists():
            return []
        keys = [
            "/".join(p.relative_to(self.directory).parts)[: -len(".value")] for p in self.directory.rglob("*.value")
        ]
        return sorted(k for k in keys if k.startswith(query))

    async def search(self, query: str) -> builtins.list[Any]:
        return []


class TearingStorage(ReferenceStorage):
    """Seeded bug (`storage-write-atomic`): a value is written in place, chunk by chunk (each synced), so a
    process killed in the middle leaves part of the new value over the old one."""

    CHUNKS = 8

    async def write(self, key: str, data: bytes) -> None:
        path = self._path(key)
        _ops.makedirs(path.parent)
        if path.exists():
            _ops.remove(path)
        step = max(1, -(-len(data) // self.CHUNKS))
        handle = _ops.open_append(path)  # the file layer's handle: appended and synced chunk by chunk
        try:
            for start in range(0, len(data), step):
                handle.append(data[start : start + step])
                handle.sync()
        finally:
            handle.close()


def _hanging_base() -> type:
    from strands_durable.sdk import DurableSessionManager

    return DurableSessionManager


class HangingSessionManager(_hanging_base()):  # type: ignore[misc]
    """Seeded bug (`liveness`): our manager, hanging for an hour when it restores an interrupted invocation."""

    def initialize(self, agent: Any, **kwargs: Any) -> None:
        import time

        if self.pending_prompt(agent.agent_id) is not None:
            time.sleep(3600)
        super().initialize(agent, **kwargs)


class StaleLockSessionManager(_hanging_base()):  # type: ignore[misc]
    """Seeded bug (`valid-history`): our manager (its sessions under `directory/sessions`), creating a new session
    under a lock file with a slow round trip inside; a creator killed there leaves the lock, which nobody breaks,
    and every later open of the session fails on it. Only a kill inside the factory call shows it."""

    CREATE_S = 0.4  # the round trip between taking the lock and marking the session created

    def __init__(self, session_id: str, directory: str | Path) -> None:
        import time

        from strands.types.exceptions import SessionException

        directory = Path(directory)
        lock, created = directory / "creating.lock", directory / "created"
        if not created.exists():
            if lock.exists():
                raise SessionException(f"Session {session_id} is being created by another process ({lock} exists)")
            _write(lock, {"pid": os.getpid()})
            time.sleep(self.CREATE_S)
        super().__init__(session_id, directory / "sessions")
        if not created.exists():
            _write(created, {})
            _ops.remove(lock)


class ProgressForgettingManager(_hanging_base()):  # type: ignore[misc]
    """Seeded bug (`nodes-not-rerun`): our manager, saving a Graph's or Swarm's node agents but not the
    orchestrator's progress after each node, so a Graph or Swarm called again starts its task over."""

    def sync_multi_agent(self, source: Any, node_id: str | None = None, **kwargs: Any) -> None:
        return None


class DetachingSessionManager(_hanging_base()):  # type: ignore[misc]
    """Seeded bug (`two-resumers`): our manager, going on in memory when another process holds the session (its
    lease refused) instead of failing the call, so the second of two resumers returns as if its messages were
    stored: a silent fork."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._detached: set[str] = set()

    async def _before_invocation(self, event: Any) -> None:
        from strands_durable.errors import SessionInUse

        key = self._key_of(event.agent)
        self._detached.discard(key)
        try:
            await super()._before_invocation(event)
        except SessionInUse:
            self._detached.add(key)

    def append_message(self, message: Any, agent: Any, **kwargs: Any) -> None:
        if self._key_of(agent) not in self._detached:
            super().append_message(message, agent, **kwargs)


def _rerunning_class() -> type:
    """Our manager with invocation hooks that forget a tool's journaled result before the tool runs."""
    from strands_durable.agent.durable import InvocationHooks

    class Forgetting(InvocationHooks):
        async def execute_tool(self, context: Any, next_fn: Any) -> Any:
            if self.conv is not None:
                self.conv.tool_results.pop(context.tool_use["toolUseId"], None)
            async for item in super().execute_tool(context, next_fn):
                yield item

    class RerunningSessionManager(_hanging_base()):  # type: ignore[misc]
        """Seeded bug (`tool-results-once`): our manager, forgetting a tool's recorded result when the tool is
        called again, so a resume runs it again."""

        def _hooks(self, *args: Any) -> Any:
            hooks = super()._hooks(*args)
            hooks.__class__ = Forgetting
            return hooks

    return RerunningSessionManager


# -- factories (what `strands chaos backend strands_durable.testing.backends:NAME` takes) --------------------------
def reference_repository(ctx: Any) -> ReferenceRepository:
    return ReferenceRepository(ctx.directory)


def reference_storage(ctx: Any) -> ReferenceStorage:
    return ReferenceStorage(ctx.directory)


def durable_manager(ctx: Any) -> Any:
    from strands_durable.sdk import DurableSessionManager

    return DurableSessionManager(ctx.session_id, ctx.directory)


def forgetful_repository(ctx: Any) -> ForgetfulRepository:
    return ForgetfulRepository(ctx.directory)


def write_behind_repository(ctx: Any) -> WriteBehindRepository:
    return WriteBehindRepository(ctx.directory)


def memory_id_repository(ctx: Any) -> MemoryIdRepository:
    return MemoryIdRepository(ctx.directory)


def detaching_manager(ctx: Any) -> DetachingSessionManager:
    return DetachingSessionManager(ctx.session_id, ctx.directory)


def stale_lock_manager(ctx: Any) -> StaleLockSessionManager:
    return StaleLockSessionManager(ctx.session_id, ctx.directory)


def progress_forgetting_manager(ctx: Any) -> ProgressForgettingManager:
    return ProgressForgettingManager(ctx.session_id, ctx.directory)


def own_ids_repository(ctx: Any) -> OwnIdsRepository:
    return OwnIdsRepository(ctx.directory)


def check_then_put_repository(ctx: Any) -> CheckThenPutRepository:
    return CheckThenPutRepository(ctx.directory)


def tearing_storage(ctx: Any) -> TearingStorage:
    return TearingStorage(ctx.directory)


def hanging_manager(ctx: Any) -> HangingSessionManager:
    return HangingSessionManager(ctx.session_id, ctx.directory)


def rerunning_manager(ctx: Any) -> Any:
    return _rerunning_class()(ctx.session_id, ctx.directory)


SEEDED: dict[str, str] = {
    "forgetful_repository": "acknowledged-not-lost",
    "write_behind_repository": "durable-per-message",
    "memory_id_repository": "ids-not-reused",
    "check_then_put_repository": "repository-create-exclusive",
    "tearing_storage": "storage-write-atomic",
    "hanging_manager": "liveness",
    "rerunning_manager": "tool-results-once",
    "stale_lock_manager": "valid-history",
    "progress_forgetting_manager": "nodes-not-rerun",
    "detaching_manager": "two-resumers",
    "own_ids_repository": "two-resumers",
}
REFERENCES: dict[str, str] = {  # kind -> the correct backend of that kind a seeded bug is compared with
    "session-repository": "reference_repository",
    "storage": "reference_storage",
    "session-manager": "durable_manager",
}
