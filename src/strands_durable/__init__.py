"""strands-durable: crash-safe runner and session store for strands-cli v0 workflow specs.

The public API, imported lazily (PEP 562) so that `import strands_durable` and `strands --help` never pay for
importing strands-agents:

    from strands_durable import run_workflow, resume, load_session, RunOptions, non_idempotent, tool_workspace
    from strands_durable import CrashPoints, InjectedCrash, LocalStore, MemoryStore, S3Store
    from strands_durable import DurableSessionManager   # plain-Python Strands agents (docs/python-agents.md)

Everything else is internal and may change between releases.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    # running workflows
    "run_workflow": "strands_durable.runner.run",
    "resume": "strands_durable.runner.run",
    "load_session": "strands_durable.runner.run",
    "RunOptions": "strands_durable.runner.options",
    "non_idempotent": "strands_durable.runner.marks",
    "tool_workspace": "strands_durable.runner.native_tools",
    # crash points
    "CrashPoints": "strands_durable.crashpoints",
    "InjectedCrash": "strands_durable.crashpoints",
    # stores
    "LocalStore": "strands_durable.store",
    "MemoryStore": "strands_durable.store",
    "S3Store": "strands_durable.store.s3",
    # plain Python agents
    "DurableSessionManager": "strands_durable.sdk",
}

__all__ = [
    "CrashPoints",
    "DurableSessionManager",
    "InjectedCrash",
    "LocalStore",
    "MemoryStore",
    "RunOptions",
    "S3Store",
    "__version__",
    "load_session",
    "non_idempotent",
    "resume",
    "run_workflow",
    "tool_workspace",
]

if TYPE_CHECKING:
    from strands_durable.crashpoints import CrashPoints, InjectedCrash
    from strands_durable.runner.marks import non_idempotent
    from strands_durable.runner.native_tools import tool_workspace
    from strands_durable.runner.options import RunOptions
    from strands_durable.runner.run import load_session, resume, run_workflow
    from strands_durable.sdk import DurableSessionManager
    from strands_durable.store import LocalStore, MemoryStore
    from strands_durable.store.s3 import S3Store


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'strands_durable' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
