"""Where the gate can kill a backend: a crash point before and after every SDK hook callback of the session
manager (hooks at orders below `HookOrder.SDK_FIRST` and above `SDK_LAST`, so whichever order the manager uses
its own callback is bracketed), and before and after every call into its repository or storage (a proxy put in place of
`session_repository`, or of a `SnapshotSessionManager`'s storage, after the factory returned). The proxy also
notes the message ids it sees listed and created, for the `ids-not-reused` clause."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from strands_durable.crashpoints import CrashPoints

REPOSITORY_METHODS = (
    "create_session",
    "read_session",
    "create_agent",
    "read_agent",
    "update_agent",
    "create_message",
    "read_message",
    "update_message",
    "list_messages",
    "create_multi_agent",
    "read_multi_agent",
    "update_multi_agent",
)
STORAGE_METHODS = ("write", "read", "delete", "list", "search")
BEFORE_ALL, AFTER_ALL = -101, 101  # `HookOrder.SDK_FIRST - 1`, `HookOrder.SDK_LAST + 1`: lower runs first
READS = frozenset({"read_session", "read_agent", "read_message", "list_messages", "read_multi_agent", "read", "list"})


@dataclass
class CallLog:
    """What the proxy saw in one process: how many calls, the message ids listed (restored) and created."""

    calls: int = 0
    listed: list[tuple[str, int]] = field(default_factory=list)
    created: list[tuple[str, int]] = field(default_factory=list)
    durable_messages: int = 0  # messages whose MessageAddedEvent had returned (set by the bracket hooks)


def handled_events(manager: Any) -> set[type]:
    """The hook event types the session manager registers a callback for (asked of a registry of its own)."""
    from strands.hooks import HookRegistry

    registry = HookRegistry()
    manager.register_hooks(registry)
    return set(registry._registered_callbacks)  # the SDK's registry has no public per-type query


def bracket_hooks(bus: CrashPoints, log: CallLog, handled: set[type]) -> Any:
    """A HookProvider emitting a crash point before and after the callbacks of every agent and multi-agent hook
    event (at orders below `HookOrder.SDK_FIRST` and above `SDK_LAST`: whatever order the manager registers at,
    and although its callbacks were registered first); the point before only for the events the manager handles
    (`handled`): elsewhere nothing of the backend runs between the two, and a kill at either leaves the same.
    After a MessageAddedEvent's last callback returned, the message counts as durable."""
    from strands.hooks import (
        AfterInvocationEvent,
        AfterModelCallEvent,
        AfterNodeCallEvent,
        AfterToolCallEvent,
        BeforeInvocationEvent,
        BeforeModelCallEvent,
        BeforeNodeCallEvent,
        BeforeToolCallEvent,
        HookProvider,
        MessageAddedEvent,
    )

    def tool(event: Any) -> str:
        return f"tool:{event.tool_use['name']}:{event.tool_use['toolUseId']}"

    events: list[tuple[Any, str, Callable[[Any], str]]] = [
        (BeforeInvocationEvent, "unit.before", lambda e: "invocation"),
        (AfterInvocationEvent, "unit.after", lambda e: "invocation"),
        (BeforeModelCallEvent, "model.before", lambda e: "model"),
        (AfterModelCallEvent, "model.answered", lambda e: "model"),
        (MessageAddedEvent, "store.before_commit", lambda e: f"message:{e.message.get('role')}"),
        (BeforeToolCallEvent, "tool.before", tool),
        (AfterToolCallEvent, "tool.executed", tool),
        (BeforeNodeCallEvent, "unit.before", lambda e: f"node:{e.node_id}"),
        (AfterNodeCallEvent, "unit.after", lambda e: f"node:{e.node_id}"),
    ]

    def emitter(site: str, where: Callable[[Any], str], side: str, event_type: Any) -> Callable[[Any], None]:
        def emit(event: Any) -> None:
            bus.emit(site, f"hook/{where(event)}:{side}")
            if event_type is MessageAddedEvent and side == "last":
                log.durable_messages = len(event.agent.messages)

        return emit

    class BracketHooks(HookProvider):
        def register_hooks(self, registry: Any, **kwargs: Any) -> None:
            for event_type, site, where in events:
                if event_type in handled:
                    first = emitter(site, where, "first", event_type)
                    registry.add_callback(event_type, first, order=BEFORE_ALL)
                registry.add_callback(event_type, emitter(site, where, "last", event_type), order=AFTER_ALL)

    return BracketHooks()


class CallProxy:
    """Stands in for a repository or storage: every call of `methods` passes a crash point before and after it;
    everything else is the backend's own attribute."""

    def __init__(self, backend: Any, methods: tuple[str, ...], bus: CrashPoints, log: CallLog, label: str) -> None:
        self._backend = backend
        self._methods = frozenset(methods)
        self._bus = bus
        self._log = log
        self._label = label

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._backend, name)
        if name not in self._methods or not callable(attribute):
            return attribute
        path = f"{self._label}/{name}"
        bus, log = self._bus, self._log

        if inspect.iscoroutinefunction(attribute):

            @functools.wraps(attribute)
            async def call_async(*args: Any, **kwargs: Any) -> Any:
                log.calls += 1
                bus.emit("store.before_commit", path)
                result = await attribute(*args, **kwargs)
                bus.emit("store.after_commit", path)
                return result

            return call_async

        @functools.wraps(attribute)
        def call(*args: Any, **kwargs: Any) -> Any:
            log.calls += 1
            bus.emit("store.before_commit", path)
            result = attribute(*args, **kwargs)
            _note_ids(log, name, args, kwargs, result)
            bus.emit("store.after_commit", path)
            return result

        return call


def _note_ids(log: CallLog, method: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
    """The message ids a repository call listed or created: (agent id, message id); arguments by position or name."""
    named = dict(zip(("session_id", "agent_id", "session_message"), args, strict=False)) | kwargs
    agent_id = named.get("agent_id")
    if method == "list_messages" and isinstance(result, list):
        log.listed.extend((agent_id, m.message_id) for m in result if hasattr(m, "message_id"))
    elif method == "create_message" and hasattr(named.get("session_message"), "message_id"):
        log.created.append((agent_id, named["session_message"].message_id))


def proxy_manager(manager: Any, bus: CrashPoints, log: CallLog) -> bool:
    """Put the proxy in place of the manager's repository or storage; whether there was one to proxy."""
    repository = getattr(manager, "session_repository", None)
    if repository is not None and not isinstance(repository, CallProxy):
        manager.session_repository = CallProxy(repository, REPOSITORY_METHODS, bus, log, "repository")
        return True
    storage = getattr(manager, "_storage", None)
    if storage is not None and not isinstance(storage, CallProxy):
        manager._storage = CallProxy(storage, STORAGE_METHODS, bus, log, "storage")
        return True
    return False
