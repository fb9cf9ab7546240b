"""The agent tables of the docs are the engine's: the one between the `agents-table` markers of
docs/python-agents.md and of docs/chaos-plugin.md equals what `python -m strands_durable.faults.agents.managers
NAME` prints (faults/agents/managers.py, over the engine behind `strands_chaos.run_agent`).

Remaking a table crashes both managers' conversations at every point (~2 minutes of CPU for the two), so the
comparison is a `long` proof (`python -m pytest -m long`, CI's second step). The default run keeps the same rules
on the same conversations in less time: tests/plugin/test_plugin_agents.py crashes the ledger conversation (one
prompt) at every point, ours passing and FileSessionManager failing `invalid-request` and `workspace`, and
tests/sdk/test_agent_faults.py SIGKILLs a forked child of an agent at sampled hook and commit points with both
managers."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable.faults.agents.managers import TABLES, make, table_in

DOCS = Path(__file__).resolve().parents[2] / "docs"
DOCUMENTS = {"python-agents": "python-agents.md", "chaos-plugin": "chaos-plugin.md"}


def test_every_table_the_module_makes_has_its_place_in_a_document() -> None:
    assert set(DOCUMENTS) == set(TABLES)
    for name, document in DOCUMENTS.items():
        assert table_in((DOCS / document).read_text(), name).startswith("| manager |")


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_the_documented_table_is_what_the_engine_makes(name: str) -> None:
    assert table_in((DOCS / DOCUMENTS[name]).read_text(), name) == make(name)
