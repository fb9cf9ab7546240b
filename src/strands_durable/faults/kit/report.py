"""Chaos totals: the summary line CI greps and the JSON report.

Each explored item reports its counts as pytest `user_properties` (so they reach JUnit XML and, under
pytest-xdist, the controller); `ChaosTotals` adds them up wherever the reports arrive.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.faults.kit.coverage import Coverage

# the file operations (the whole store) are imported where used: the xdist controller imports this module to add
# up reports, and every import there delays starting the workers

PROPERTY_PREFIX = "strands_chaos_"


def summary_line(*, points: int, workflows: int, sites: int, divergences: int, invalid: int, seed: int) -> str:
    return (
        f"strands-chaos: {points} crash points explored in {workflows} workflows ({sites} site kinds), "
        f"{divergences} divergences, {invalid} invalid histories, seed {seed}"
    )


@dataclass
class ChaosTotals:
    seed: int
    faults: list[str]
    mode: str
    workflows: set[str] = field(default_factory=set)
    sites: set[str] = field(default_factory=set)
    points: int = 0
    divergences: int = 0
    invalid: int = 0
    items: list[dict[str, Any]] = field(default_factory=list)  # one record per item's run or point, when kept
    keep_items: bool = True  # False: no JSON or HTML report will read `items`, so only the totals are kept
    recorded: int = 0  # records added, kept or not
    not_explorable: list[str] = field(default_factory=list)  # workflows whose network tools have no cassette
    failing_golden: dict[str, str] = field(default_factory=dict)  # workflow -> the deterministic failure explored
    untaken_edges: dict[str, str] = field(default_factory=dict)  # graph workflow -> edges its golden run never took
    coverage: Coverage = field(default_factory=Coverage)  # points enumerated and reached, per class and site kind
    segments: Counter[str] = field(default_factory=Counter)  # interrupts by how their crash state was reached

    def add(self, nodeid: str, outcome: str, user_properties: list[tuple[str, Any]]) -> None:
        """Add one item's reports: its properties hold one record per explored workflow run or point, each
        starting with `strands_chaos_workflow`. A failing item's `reproduce` line (recorded once, after its
        records) is given to each of them."""
        records = records_of(user_properties)
        reproduce = next((r.pop("reproduce") for r in records if "reproduce" in r), None)
        for record in records:
            if reproduce is not None:
                record["reproduce"] = reproduce
            if record.get("not_explorable"):  # not explored: its own summary line, not the crash-point totals
                self.not_explorable.append(str(record["workflow"]))
            else:
                self.workflows.add(str(record["workflow"]))
            if record.get("golden_failure"):
                self.failing_golden[str(record["workflow"])] = str(record["golden_failure"])
            if record.get("untaken_edges"):
                self.untaken_edges[str(record["workflow"])] = str(record["untaken_edges"])
            self.sites.update(s for s in str(record.get("sites", "")).split(",") if s)
            self.points += int(record.get("explored", 0))
            self.divergences += int(record.get("divergences", 0))
            self.invalid += int(record.get("invalid_histories", 0))
            self.coverage.add(record.get("coverage"))
            if record.get("segment"):
                self.segments[str(record["segment"])] += 1
            self.coverage.add_orders(record.get("orders"))
            self.recorded += 1
            if self.keep_items:
                self.items.append(item_record(nodeid, outcome, record))

    def line(self) -> str:
        return summary_line(
            points=self.points,
            workflows=len(self.workflows),
            sites=len(self.sites),
            divergences=self.divergences,
            invalid=self.invalid,
            seed=self.seed,
        )

    def segments_line(self) -> str | None:
        """How the interrupts reached their crash states (faults/kit/derived.py): derived from the golden run (and
        how many of those also ran the real segment to compare), or the real segment, counted by the reason."""
        if not self.segments:
            return None
        checked = self.segments["derived, checked"]
        derived = self.segments["derived"] + checked
        fallbacks = sorted((reason, n) for reason, n in self.segments.items() if not reason.startswith("derived"))
        real = sum(n for _, n in fallbacks)
        reasons = f" ({', '.join(f'{reason} {n}' for reason, n in fallbacks)})" if fallbacks else ""
        return (
            f"strands-chaos: crash states: {derived} derived from the golden run ({checked} checked against the real "
            f"segment), {real} from the real segment{reasons}"
        )

    def failing_golden_line(self) -> str | None:
        """A further summary line, only when some workflow's golden run ends in a deterministic failure (each of
        its crash points was held to resuming to that same failure)."""
        if not self.failing_golden:
            return None
        names = ", ".join(f"{name} ({failure.split(':')[0]})" for name, failure in sorted(self.failing_golden.items()))
        return (
            f"strands-chaos: {len(self.failing_golden)} workflows explored to their deterministic failure "
            f"(every crash point resumed to the same failure): {names}"
        )

    def untaken_edges_line(self) -> str | None:
        """A further summary line naming the graph edges no golden run took with this seed (no crash point lies
        on them; another seed, or a spec whose conditions the synthetic model can satisfy, covers them)."""
        if not self.untaken_edges:
            return None
        named = "; ".join(f"{name}: {edges}" for name, edges in sorted(self.untaken_edges.items()))
        return f"strands-chaos: graph edges no golden run took with seed {self.seed}: {named}"

    def not_explorable_line(self) -> str | None:
        """The second summary line, only when some workflow could not be explored."""
        if not self.not_explorable:
            return None
        names = sorted(set(self.not_explorable))
        return f"strands-chaos: {len(names)} workflows not explorable (network tools without a cassette): " + ", ".join(
            names
        )

    def body(self) -> dict[str, Any]:
        """The JSON report's document (the HTML report renders the same one)."""
        return {
            "summary": self.line(),
            "not_explorable": sorted(set(self.not_explorable)),
            "failing_golden": dict(sorted(self.failing_golden.items())),
            "untaken_edges": dict(sorted(self.untaken_edges.items())),
            "crash_points_explored": self.points,
            "crash_segments": dict(sorted(self.segments.items())),
            "workflows": sorted(self.workflows),
            "site_kinds": sorted(self.sites),
            "divergences": self.divergences,
            "invalid_histories": self.invalid,
            "seed": self.seed,
            "coverage": self.coverage.body(),
            "faults": self.faults,
            "mode": self.mode,
            "items": self.items,
        }

    def write_json(self, path: Path) -> None:
        write_report_file(path, json.dumps(self.body(), indent=2, ensure_ascii=False) + "\n")


def write_report_file(path: Path, text: str) -> None:
    """Write a report (JSON or HTML) atomically through the project's file-operations layer."""
    from strands_durable.store.fileops import FileOps

    ops = FileOps()
    ops.makedirs(path.parent.resolve())
    ops.write_atomic(path, text.encode("utf-8"))


def item_record(nodeid: str, outcome: str, record: dict[str, Any]) -> dict[str, Any]:
    """One record of an item as the JSON report lists it under `items`."""
    problems = record.get("problems")
    schedules = record.get("schedules")
    return {
        "nodeid": nodeid,
        "kind": record_kind(nodeid, record),
        "outcome": outcome,
        **{k: v for k, v in record.items() if k not in ("problems", "schedules", "coverage", "orders")},
        "problems": json.loads(problems) if isinstance(problems, str) else [],
        **({"schedules": json.loads(schedules)} if isinstance(schedules, str) else {}),
    }


def report_path_problem(path: Path) -> str | None:
    """Why a report could not be written at `path` (checked before a long run, not after it), or None."""
    if path.is_dir():
        return f"{path} is a directory"
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{parent} is not writable"
    return None


def record_kind(nodeid: str, record: dict[str, Any]) -> str:
    """What an item record is: `golden`, `point`, `schedules`, `fault` (a real-fault class), `not-explorable`."""
    if record.get("not_explorable"):
        return "not-explorable"
    if record.get("fault"):
        return "fault"
    if "schedules" in record or nodeid.endswith("::schedules"):
        return "schedules"
    return "point" if record.get("point") else "golden"


def records_of(user_properties: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for name, value in user_properties:
        if not name.startswith(PROPERTY_PREFIX):
            continue
        key = name[len(PROPERTY_PREFIX) :]
        if key == "workflow":
            records.append({})
        if records:
            records[-1][key] = value
    return records
