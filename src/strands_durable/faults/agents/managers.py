"""The agent tables of the docs, made by the engine behind `strands_chaos.run_agent` (faults/agents/engine.py):
ours against the SDK's `FileSessionManager`, each conversation crashed at every point of its golden run, resumed
both ways, judged by the kit's rules.

    python -m strands_durable.faults.agents.managers [python-agents|chaos-plugin]

prints the table of docs/python-agents.md (the expenses conversation, SIGKILL of a forked child at every point)
and of docs/chaos-plugin.md (the ledger conversation, an in-process crash at every point); each document holds its
table between the markers `<!-- agents-table: NAME -->` and `<!-- /agents-table -->`, and a test holds the two
equal (`table_in`).
"""

from __future__ import annotations

import functools
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from strands_durable.faults.agents.engine import AgentOutcome, explore, rule_counts
from strands_durable.faults.agents.examples import (
    LEDGER_PROMPTS,
    MANAGERS,
    PROMPTS,
    SESSION_ID,
    expenses_agent,
    ledger_agent,
)
from strands_durable.faults.agents.run import STYLES, AgentChaos
from strands_durable.faults.kit.golden import AgentGoldenRun
from strands_durable.store.fileops import FileOps

LABELS = {"durable": "DurableSessionManager", "sdk-file": "FileSessionManager"}
HOOK_PATH = "hook"  # the points every manager has: the SDK's hooks (the engine's crash hooks name them so)


def explored(
    factory: Callable[..., Any], prompts: tuple[str, ...], base: Path, fault: str, **options: Any
) -> dict[str, tuple[AgentGoldenRun, list[AgentOutcome]]]:
    """Each manager's conversation explored at every point under `fault`: manager -> (golden run, outcomes)."""
    runs = {}
    for manager in MANAGERS:
        chaos = AgentChaos(functools.partial(factory, manager=manager), prompts, faults=(fault,), **options)
        runs[manager] = explore(chaos, base / manager)
    return runs


def _passed(outcomes: list[AgentOutcome], style: str) -> int:
    return sum(1 for o in outcomes if o.fired and not [f for f in o.findings if f.variant == style])


def _reran(outcomes: list[AgentOutcome], style: str) -> int:
    """Points where a tool that had run to its end, its result not stored, ran again in this resume style."""
    return sum(1 for o in outcomes for r in o.resumed if r.style == style and r.reran)


def markdown(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def python_agents_table(base: Path) -> str:
    """docs/python-agents.md: the expenses conversation, a forked child SIGKILLed at every point, per manager and
    resume style; ours at the SDK-hook points (the points `FileSessionManager` has) and at all of its points."""
    runs = explored(expenses_agent, PROMPTS, base, "kill", session_id=SESSION_ID)
    groups = []
    for manager, (golden, outcomes) in runs.items():
        hooks = [o for o in outcomes if o.point.startswith(HOOK_PATH)]
        groups.append((f"{LABELS[manager]} (SDK-hook points)", hooks, golden))
        if len(hooks) != len(outcomes):
            groups.append((f"{LABELS[manager]} (all points)", outcomes, golden))
    rules = sorted({rule for _, outcomes, _ in groups for rule in rule_counts(outcomes)})
    header = ["manager", "resume", "points", "passed", *[f"failed: {r}" for r in rules], "finished tool re-run"]
    rows = []
    for label, outcomes, golden in groups:
        for style in STYLES:
            counts = rule_counts(outcomes, style)
            failed = [counts[r] for r in rules]
            rows.append([label, style, len(outcomes), _passed(outcomes, style), *failed, _reran(outcomes, style)])
        if not golden.concurrent:
            rows.append([label, "(the golden run's tools did not overlap)", "", "", *["" for _ in rules], ""])
    return markdown(header, rows)


def chaos_plugin_table(base: Path) -> str:
    """docs/chaos-plugin.md: the ledger conversation, an in-process crash at every point; a point fails when
    either resume style breaks a rule."""
    runs = explored(ledger_agent, LEDGER_PROMPTS, base, "interrupt")
    rules = sorted({rule for _, outcomes in runs.values() for rule in rule_counts(outcomes)})
    rows = [
        [LABELS[manager], len(outcomes), sum(o.ok for o in outcomes), *[rule_counts(outcomes)[r] for r in rules]]
        for manager, (_, outcomes) in runs.items()
    ]
    return markdown(["manager", "points", "passed", *[f"failed: {r}" for r in rules]], rows)


TABLES: dict[str, Callable[[Path], str]] = {
    "python-agents": python_agents_table,
    "chaos-plugin": chaos_plugin_table,
}


def table_in(document: str, name: str) -> str:
    """The table a document holds between `<!-- agents-table: NAME -->` and `<!-- /agents-table -->`."""
    found = re.search(rf"<!-- agents-table: {re.escape(name)} -->\n(.*?)\n<!-- /agents-table -->", document, re.S)
    if found is None:
        raise ValueError(f"no agents-table {name!r} in the document")
    return found.group(1).strip()


def make(name: str) -> str:
    """One table, made in a scratch directory removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix="strands-agents-tables-"))
    try:
        return TABLES[name](base)
    finally:
        FileOps().remove_tree(base)


def main(argv: list[str] | None = None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or list(TABLES)
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        print(f"Error: unknown table {unknown[0]!r}; choose from {', '.join(TABLES)}", file=sys.stderr)
        return 2
    for name in names:
        print(f"<!-- agents-table: {name} -->\n{make(name)}\n<!-- /agents-table -->")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
