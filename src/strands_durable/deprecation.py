"""Import paths that moved: each keeps working for one release (0.2) with a DeprecationWarning naming the new one.

README documented `strands_durable.runner.api`, `.runner.context` and `.runner.tools` as the Python API; the
public names now live at the package root (`from strands_durable import run_workflow`).
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

# old module -> (the module that now holds its names, the names README documented there)
MOVED: dict[str, tuple[str, frozenset[str]]] = {
    "strands_durable.runner.api": ("strands_durable.runner.run", frozenset({"run_workflow", "resume", "load_session"})),
    "strands_durable.runner.context": ("strands_durable.runner.options", frozenset({"RunOptions"})),
    "strands_durable.runner.tools": ("strands_durable.runner.marks", frozenset({"non_idempotent"})),
    # the local S3 test server left the product's store package for `testing/` (README: `python -m ...`)
    "strands_durable.store.s3.local_server": (
        "strands_durable.testing.s3_server",
        frozenset({"LocalS3Server", "start_server", "main"}),
    ),
}


def moved(module: str, name: str) -> Any:
    """The value `module.name` now has elsewhere, with a DeprecationWarning pointing at the caller's import."""
    target, _ = MOVED[module]
    value = getattr(importlib.import_module(target), name)
    public = "strands_durable" if hasattr(importlib.import_module("strands_durable"), name) else target
    warnings.warn(
        f"{module}.{name} is deprecated and goes away in 0.2; import it from {public}",
        DeprecationWarning,
        stacklevel=3,
    )
    return value
