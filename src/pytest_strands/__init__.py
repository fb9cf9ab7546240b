"""pytest-strands: the `--strands-chaos` plugin (plugin.py, its items in items.py) and its Python-agent face
(agents.py)."""

from __future__ import annotations


def point(name: str) -> None:
    """A crash point inside a tool body: `strands_chaos.run_agent` crashes there too; a no-op outside a chaos run.
    The same as the fixture's `strands_chaos.point(name)`, for tools defined where the fixture is not in scope."""
    from strands_durable.faults.agents.run import point as emit

    emit(name)
