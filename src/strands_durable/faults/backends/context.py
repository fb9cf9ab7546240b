"""What a backend author's factory is given and what it may return: `GateContext`, the factory named
`module:function` resolved, and the kind of backend it returned (a SessionManager, a SessionRepository or a
Storage), each failure one error naming the factory."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_durable.errors import ExitCode, UsageError

MANAGER, REPOSITORY, STORAGE = "session-manager", "session-repository", "storage"
KINDS = (MANAGER, REPOSITORY, STORAGE)
DECLARABLE = frozenset({"two-resumers", "durable-per-message"})  # what `factory.strands_chaos_absent` may name


@dataclass(frozen=True)
class GateContext:
    """What `factory(ctx)` builds on. `session_id`: the session of this run (a crash run and its resumes share it);
    `directory`: a scratch directory the crash run and its resumes share; `prefix`: unique per gate run, for
    backends on a shared server (put it in front of every key, table or bucket prefix)."""

    session_id: str
    directory: Path
    prefix: str


BackendFactory = Callable[[GateContext], Any]


class BackendFactoryError(UsageError):
    """The factory cannot be imported or called, or returned none of the three kinds (exit 2)."""


class BackendUnavailable(BackendFactoryError):
    """The factory raised (its server is not running, a credential is missing, ...): exit 12, like any
    unreachable storage."""

    exit_code = ExitCode.IO


def factory_name(factory: BackendFactory | str) -> str:
    """How reports and errors name a factory: `module:function`."""
    if isinstance(factory, str):
        return factory
    module = getattr(factory, "__module__", None) or "?"
    name = getattr(factory, "__qualname__", None) or getattr(factory, "__name__", None) or type(factory).__name__
    return f"{module}:{name}"


def resolve(factory: BackendFactory | str) -> BackendFactory:
    """The factory itself, or the one `module:function` names; BackendFactoryError naming it otherwise."""
    if not isinstance(factory, str):
        if not callable(factory):
            raise BackendFactoryError(f"backend factory {factory!r} is not callable")
        return factory
    module_name, _, name = factory.partition(":")
    if not module_name or not name:
        raise BackendFactoryError(f"backend factory {factory!r}: expected MODULE:FACTORY")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # an import that fails for any reason is the user's module failing
        raise BackendFactoryError(f"backend factory {factory}: cannot import {module_name}: {_one_line(exc)}") from None
    found: Any = module
    for part in name.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise BackendFactoryError(f"backend factory {factory}: {module_name} has no {name}")
    if not callable(found):
        raise BackendFactoryError(f"backend factory {factory} is not callable (it is {_describe(found)})")
    return found


def absent_clauses(factory: BackendFactory) -> frozenset[str]:
    """The clauses the factory declares absent (`factory.strands_chaos_absent`); only `DECLARABLE` ones."""
    declared = getattr(factory, "strands_chaos_absent", None) or ()
    if isinstance(declared, str):
        declared = {declared}
    declared = frozenset(declared)
    refused = sorted(declared - DECLARABLE)
    if refused:
        raise BackendFactoryError(
            f"backend factory {factory_name(factory)}: strands_chaos_absent names {', '.join(refused)}; only "
            f"{' and '.join(sorted(DECLARABLE))} may be declared absent"
        )
    return declared


def kind_of(backend: Any) -> str | None:
    """Which of the three kinds `backend` is (a SessionManager first: managers built like the SDK's file and S3
    ones are also their own repository), or None."""
    from strands.session.session_manager import SessionManager
    from strands.session.session_repository import SessionRepository

    if isinstance(backend, SessionManager):
        return MANAGER
    if isinstance(backend, SessionRepository):
        return REPOSITORY
    if all(inspect.iscoroutinefunction(getattr(backend, m, None)) for m in ("write", "read", "delete", "list")):
        return STORAGE  # the SDK's Storage protocol (bytes by key, async)
    return None


def build_backend(factory: BackendFactory, ctx: GateContext, name: str) -> tuple[str, Any]:
    """Call the factory; (kind, backend). BackendUnavailable when it raises, BackendFactoryError for a wrong kind."""
    try:
        backend = factory(ctx)
    except Exception as exc:
        raise BackendUnavailable(f"backend factory {name} raised {_one_line(exc)}") from None
    kind = kind_of(backend)
    if kind is None:
        raise BackendFactoryError(
            f"backend factory {name} returned {_describe(backend)}, not a SessionManager, SessionRepository or Storage"
        )
    return kind, backend


def _describe(value: Any) -> str:
    text = repr(value)
    text = text if len(text) <= 80 else text[:77] + "..."
    return f"{type(value).__module__}.{type(value).__qualname__} {text}" if value is not None else "None"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or "(no message)"
    return f"{type(exc).__name__}: {text[:200]}"
