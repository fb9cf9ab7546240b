"""The offline HTML chaos report (`--strands-chaos-html=PATH`): one self-contained file, rendered with Jinja2.

It renders the JSON report's document (`ChaosTotals.body()`), so both always agree. Any item record with a group
(`agent`, else `workflow`), a crash-point id (`point`) and problems renders as a point: its unit and site kind are
the record's `unit` and `site` when given, else read from the id (`<unit>/.../<site>`); its outcome comes from
its counts. Per group: a timeline of the points in run order (`run_index`, else by id) coloured by outcome, the
same points grouped by unit and site kind, and for each point the rules it broke with the diff against the golden run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.crashpoints import natural_key
from strands_durable.faults.kit.report import write_report_file

OUTCOMES = ("passed", "diverged", "invalid", "not-fired")
_FACTS = ("fired", "converged_at", "runs", "nodeid", "reproduce")  # shown with a point when its record has them
_FINDING = re.compile(r"^(?:(?P<where>\S+) )?\[(?P<rule>[\w.-]+)\] ?(?P<text>.*)$")


@dataclass
class DiffLine:
    kind: str  # add | del | hunk | head | ctx
    text: str


@dataclass
class ProblemView:
    rule: str
    text: str
    diff: list[DiffLine] = field(default_factory=list)


@dataclass
class PointView:
    id: str
    unit: str
    site: str
    outcome: str
    problems: list[ProblemView]
    detail: dict[str, str]  # a few facts shown with the point (fired, converged at, runs)
    run_index: float = float("inf")  # position in the golden run when the record has it, else by id
    anchor: str = ""


@dataclass
class UnitRow:
    unit: str
    cells: list[list[PointView]]  # one cell per site kind column of the group


@dataclass
class GroupView:
    name: str
    kind: str  # workflow | agent
    golden: list[ProblemView] = field(default_factory=list)
    golden_outcome: str = ""
    points: list[PointView] = field(default_factory=list)
    sites: list[str] = field(default_factory=list)
    rows: list[UnitRow] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    schedules: list[dict[str, Any]] = field(default_factory=list)
    others: list[tuple[str, str, list[ProblemView]]] = field(default_factory=list)  # (label, outcome, problems)


def parse_problem(text: str) -> ProblemView:
    """A finding's text (`[rule] detail`, then an indented diff) as a rule, a line and classified diff lines."""
    first, *rest = text.split("\n")
    found = _FINDING.match(first)
    rule, line = (found["rule"], ((found["where"] or "") + " " + found["text"]).strip()) if found else ("", first)
    diff = []
    for raw in rest:
        body = raw[4:] if raw.startswith("    ") else raw
        if body.startswith(("--- ", "+++ ")):
            kind = "head"
        elif body.startswith("@@"):
            kind = "hunk"
        elif body.startswith("+"):
            kind = "add"
        elif body.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        diff.append(DiffLine(kind, body))
    return ProblemView(rule, line, diff)


def unit_and_site(point_id: str) -> tuple[str, str]:
    """`branch:trends/step[1]:analyst/turn[0]/model.before` -> (`branch:trends/step[1]:analyst`, `model.before`):
    the unit is the leading `kind:name` segments, the site the last segment."""
    parts = point_id.split("/")
    unit = []
    for part in parts[:-1]:
        if ":" not in part or part.startswith(("turn[", "tool[")):
            break
        unit.append(part)
    return "/".join(unit) or parts[0], parts[-1]


def outcome_of(item: dict[str, Any]) -> str:
    if int(item.get("invalid_histories", 0) or 0):
        return "invalid"
    if item.get("kind") == "point" and "fired" in item and not item["fired"]:
        return "not-fired"
    if int(item.get("divergences", 0) or 0) or item.get("outcome") == "failed":
        return "diverged"
    return "passed"


def build_groups(body: dict[str, Any]) -> list[GroupView]:
    groups: dict[str, GroupView] = {}
    for item in body.get("items", []):
        name = str(item.get("agent") or item.get("workflow") or item.get("nodeid", "?"))
        group = groups.setdefault(name, GroupView(name=name, kind="agent" if item.get("agent") else "workflow"))
        problems = [parse_problem(str(p)) for p in item.get("problems", [])]
        kind = item.get("kind", "point" if item.get("point") else "golden")
        if kind == "golden":
            group.golden, group.golden_outcome = problems, outcome_of(item)
        elif kind == "point":
            unit, site = unit_and_site(str(item["point"]))
            facts = {k: str(item[k]) for k in _FACTS if item.get(k) not in (None, "")}
            group.points.append(
                PointView(
                    id=str(item["point"]),
                    unit=str(item.get("unit") or unit),
                    site=str(item.get("site") or item.get("sites") or site),
                    outcome=outcome_of(item),
                    problems=problems,
                    detail=facts,
                    run_index=float(item["run_index"]) if item.get("run_index") not in (None, "") else float("inf"),
                )
            )
        else:
            if kind == "schedules":
                group.schedules = list(item.get("schedules", []))
            label = {"schedules": "schedules", "not-explorable": "not explorable"}.get(kind, str(item.get("point")))
            group.others.append((label, outcome_of(item), problems))
    for index, group in enumerate(groups.values()):
        _lay_out(group, index)
    return list(groups.values())


def _lay_out(group: GroupView, index: int) -> None:
    group.points.sort(key=lambda p: (p.run_index, natural_key(p.id)))
    for n, point in enumerate(group.points):
        point.anchor = f"p{index}-{n}"
    group.sites = sorted({p.site for p in group.points}, key=_site_order)
    by_unit: dict[str, UnitRow] = {}
    for point in group.points:
        row = by_unit.setdefault(point.unit, UnitRow(point.unit, [[] for _ in group.sites]))
        row.cells[group.sites.index(point.site)].append(point)
    group.rows = list(by_unit.values())
    group.counts = {o: sum(p.outcome == o for p in group.points) for o in OUTCOMES}


_SITE_ORDER = ("unit.before", "model.before", "model.answered", "tool.before", "tool.executed", "tool.committed")


def _site_order(site: str) -> tuple[int, str]:
    if site in _SITE_ORDER:
        return _SITE_ORDER.index(site), site
    return (len(_SITE_ORDER) + 1 if site == "unit.after" else len(_SITE_ORDER)), site


def render_html(body: dict[str, Any]) -> str:
    """The report as one HTML document: inline CSS and JS, nothing fetched."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    groups = build_groups(body)
    points = [p for g in groups for p in g.points]
    totals = {o: sum(p.outcome == o for p in points) for o in OUTCOMES}
    return env.get_template("chaos_report.html.j2").render(body=body, groups=groups, totals=totals, outcomes=OUTCOMES)


def write_html(body: dict[str, Any], path: Path) -> None:
    write_report_file(path, render_html(body))
