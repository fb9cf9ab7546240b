"""The kit's one vocabulary of results: the finding type, the class declaration the registry lists
(faults/classes/registry.py) and what one class did over one workflow.

An explorer (interrupt, kill, power, disk, concurrent, stream, compound) runs a workflow, breaks it in its own
way, lets a fresh run resume it, and judges the result against the golden (uninterrupted) run. Every problem is a
`Finding` with a stable id, so a failing one can be named and rerun.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

INVALID_HISTORY = "invalid-history"


@dataclass(frozen=True)
class Finding:
    """One violated rule with a readable detail (a first difference, an id, a message); the real-fault classes
    also say where: which class, at which place (a stable point id), in which variant. The one finding type of
    every fault class, the in-process explorer included."""

    rule: str  # identical | data-lost | tool-rerun | invalid-history | unclean-failure | ...
    detail: str
    fault: str = ""  # kill | power | disk | concurrent | stream | compound ("": an in-process crash point)
    point: str = ""  # stable id of the place the fault was injected
    variant: str = ""  # the signal, the errno, the crash-state kind, ...

    @property
    def id(self) -> str:
        return f"{self.fault}:{self.point}:{self.variant}"

    @property
    def invalid_history(self) -> bool:
        return self.rule == INVALID_HISTORY

    def __str__(self) -> str:
        where = f"{self.id} " if self.fault else ""
        return f"{where}[{self.rule}] {self.detail}"


@dataclass(frozen=True)
class FaultClass:
    """One real-fault class: its name, its bounds per level (`gate`: what CI runs, `full`: every point it knows;
    keyword arguments of `explore`) and its explorer `explore(target, workdir, *, golden=..., **bounds)`.
    A class module declares `FAULT_CLASS`; the registry (faults/classes/registry.py) lists it by name."""

    name: str
    bounds: Mapping[str, Mapping[str, Any]]
    explore: Callable[..., FaultRun]
    records_own_golden: bool = False  # it runs the golden run itself (power records it through its file layer)
    seeded: bool = False  # its explorer takes the soak's `seed`


@dataclass
class FaultRun:
    """What one explorer did over one workflow: points explored, distinct crash states, outcomes, findings."""

    fault: str
    workflow: str
    explored: int = 0
    states: set[str] = field(default_factory=set)  # digests of distinct crash states (power, disk, kill)
    outcomes: Counter[str] = field(default_factory=Counter)  # "resumed", "clean-failure: 17", ...
    findings: list[Finding] = field(default_factory=list)
    enumerated: Counter[str] = field(default_factory=Counter)  # site kind -> points explored there

    def explore_at(self, point: str) -> None:
        """Count one point this class set out to explore (reached unless a `not-fired` finding names it)."""
        from strands_durable.faults.kit.coverage import site_kind

        self.explored += 1
        self.enumerated[site_kind(point)] += 1

    def coverage(self) -> dict[str, list[int]]:
        """Per site kind: [points enumerated, points reached] (kit/coverage.py)."""
        from strands_durable.faults.kit.coverage import NOT_FIRED, site_kind

        unreached = Counter(
            site_kind(point) for point, _ in {(f.point, f.variant) for f in self.findings if f.rule == NOT_FIRED}
        )
        return {site: [count, count - unreached[site]] for site, count in sorted(self.enumerated.items())}

    def add(self, point: str, variant: str, rule: str, detail: str) -> None:
        self.findings.append(Finding(rule, detail, self.fault, point, variant))

    def judged(self, point: str, variant: str, problems: Iterable[tuple[str, str]]) -> None:
        """Add the (rule, detail) problems a judge's rules found at `point` in `variant`."""
        for rule, detail in problems:
            self.add(point, variant, rule, detail)

    @property
    def unique_states(self) -> int:
        return len(self.states)

    def count(self, rule: str) -> int:
        return sum(1 for f in self.findings if f.rule == rule)

    def summary(self) -> dict[str, Any]:
        return {
            "fault": self.fault,
            "workflow": self.workflow,
            "crash_points": self.explored,
            "unique_states": self.unique_states,
            "outcomes": dict(sorted(self.outcomes.items())),
            "divergences": len(self.findings) - self.count("invalid-history") - self.count("data-lost"),
            "invalid_histories": self.count("invalid-history"),
            "data_lost": self.count("data-lost"),
            "findings": [{"id": f.id, "rule": f.rule, "detail": f.detail} for f in self.findings],
        }
