"""Backend factories the backend-gate tests run (importable as `tests.faults.backend_factories:NAME`, so the
command line reaches them too)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_durable.store.fileops import FileOps


def sdk_file(ctx: Any) -> Any:
    """The SDK's FileSessionManager (its own repository)."""
    from strands.session.file_session_manager import FileSessionManager

    return FileSessionManager(ctx.session_id, storage_dir=str(ctx.directory))


def durable(ctx: Any) -> Any:
    from strands_durable.sdk import DurableSessionManager

    return DurableSessionManager(ctx.session_id, ctx.directory)


def durable_without_racing(ctx: Any) -> Any:
    return durable(ctx)


durable_without_racing.strands_chaos_absent = {"two-resumers"}  # type: ignore[attr-defined]


def durable_declaring_a_crash_clause(ctx: Any) -> Any:
    return durable(ctx)


durable_declaring_a_crash_clause.strands_chaos_absent = {"valid-history"}  # type: ignore[attr-defined]


def server_not_running(ctx: Any) -> Any:
    raise ConnectionError("Error 111 connecting to 127.0.0.1:6390. Connection refused.")


def not_a_backend(ctx: Any) -> Any:
    return {"sessions": "somewhere"}


def noting_manager(order: str) -> Any:
    """A FileSessionManager whose MessageAddedEvent callback, registered at `order` (SDK_FIRST or SDK_LAST),
    appends a line to `ctx.directory/noted` (for the bracket test: which side of it a crash point is)."""
    from strands.hooks import MessageAddedEvent
    from strands.hooks.registry import HookOrder
    from strands.session.file_session_manager import FileSessionManager

    class Noting(FileSessionManager):
        def __init__(self, session_id: str, directory: Path) -> None:
            super().__init__(session_id, storage_dir=str(directory))
            self.noted = directory / "noted"

        def register_hooks(self, registry: Any, **kwargs: Any) -> None:
            super().register_hooks(registry, **kwargs)
            registry.add_callback(MessageAddedEvent, self._note, order=getattr(HookOrder, order))

        def _note(self, event: Any) -> None:
            handle = FileOps().open_append(self.noted)
            handle.append(b"x\n")
            handle.close()

    return lambda ctx: Noting(ctx.session_id, Path(ctx.directory))
