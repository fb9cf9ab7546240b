"""Coverage as numbers: per fault class and per site kind, how many crash points were enumerated (declared to be
explored) and how many of them were reached (the fault fired there), and how many completion orders of concurrent
tools were explored of those possible. A point declared and never reached is a
failure (`not-fired`) wherever it is explored, so a gate cannot pass by exploring less; these counts say how much
was explored.

One item's coverage is a small JSON document, `{fault class: {site kind: [enumerated, reached]}}`, recorded as
its `coverage` property; `Coverage` adds them up for the summary, the JSON and the HTML report.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

NOT_FIRED = "not-fired"
_SUFFIX = re.compile(r"(#\d+|\[[^\]]*\])+$")


def site_kind(point: str) -> str:
    """The site kind of a point id: a crash point's site (`step[0]:a/turn[0]/tool.before#2` -> `tool.before`), or
    a real-fault class's own kind of point without its index (`op[12]` -> `op`, `call[3]` -> `call`)."""
    last = point.rsplit("/", 1)[-1]
    return _SUFFIX.sub("", last) or last


def one_point(fault: str, site: str, reached: bool) -> str:
    """The `coverage` property of an item that explored one point."""
    return json.dumps({fault: {site: [1, int(reached)]}}, separators=(",", ":"))


@dataclass
class Coverage:
    """Points enumerated and reached, per fault class and site kind, added up over items."""

    points: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    orders: list[int] = field(default_factory=lambda: [0, 0])  # completion orders [explored, possible]

    def add(self, document: str | dict[str, Any] | None) -> None:
        """Add one item's `coverage` property (JSON text or its parsed form; None or "": nothing)."""
        if not document:
            return
        parsed = json.loads(document) if isinstance(document, str) else document
        for fault, sites in parsed.items():
            ours = self.points.setdefault(fault, {})
            for site, (enumerated, reached) in sites.items():
                counts = ours.setdefault(site, [0, 0])
                counts[0] += int(enumerated)
                counts[1] += int(reached)

    def add_orders(self, document: str | list[int] | None) -> None:
        """Add one golden run's `orders` property: [completion orders explored, possible] over its turns."""
        if not document:
            return
        explored, possible = json.loads(document) if isinstance(document, str) else document
        self.orders[0] += int(explored)
        self.orders[1] += int(possible)

    def totals(self, fault: str) -> tuple[int, int]:
        sites = self.points.get(fault, {})
        return sum(c[0] for c in sites.values()), sum(c[1] for c in sites.values())

    def lines(self) -> list[str]:
        """One summary line per fault class: `strands-chaos: coverage interrupt: 40 of 40 crash points reached
        (model.answered 4/4, tool.before 6/6, ...)`."""
        lines = []
        for fault in sorted(self.points):
            enumerated, reached = self.totals(fault)
            sites = ", ".join(f"{site} {c[1]}/{c[0]}" for site, c in sorted(self.points[fault].items()))
            lines.append(f"strands-chaos: coverage {fault}: {reached} of {enumerated} crash points reached ({sites})")
        if self.orders[1]:
            explored, possible = self.orders
            lines.append(f"strands-chaos: coverage orders: {explored} of {possible} completion orders explored")
        return lines

    def body(self) -> dict[str, Any]:
        """The JSON report's `coverage`: `points`, per class its totals and, per site kind, enumerated and reached;
        `orders`, the completion orders of concurrent tools explored of those possible."""
        document: dict[str, Any] = {}
        for fault in sorted(self.points):
            enumerated, reached = self.totals(fault)
            document[fault] = {
                "enumerated": enumerated,
                "reached": reached,
                "sites": {
                    site: {"enumerated": c[0], "reached": c[1]} for site, c in sorted(self.points[fault].items())
                },
            }
        return {"points": document, "orders": {"explored": self.orders[0], "possible": self.orders[1]}}
