"""strands-durable: crash-safe runner and session store for strands-cli v0 workflow specs.

The public API is imported lazily so that `strands --help` never pays for importing strands-agents.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
