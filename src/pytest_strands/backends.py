"""Session backends under `pytest --strands-chaos`: `strands_chaos.gate_backend(factory)` runs the backend gate
(`strands_durable.faults.backends`) in the test, puts one record per clause into the chaos report (JSON and HTML:
the backend is a group, each clause a point) and fails the test naming the clauses that failed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_strands.items import ChaosFailure
from strands_durable.faults.kit.report import PROPERTY_PREFIX


def properties(report: Any) -> list[tuple[str, Any]]:
    """The report's clause records (a clause not applicable counts as passed, its detail kept)."""
    group = f"backend {report.backend}"
    records: list[dict[str, Any]] = [
        {"workflow": group, "explored": report.crash_points, "divergences": 0, "invalid_histories": 0, "problems": "[]"}
    ]
    for clause in report.clauses:
        failed = clause.outcome == "fail"
        records.append(
            {
                "workflow": group,
                "point": f"{report.kind}/{clause.name}",
                "unit": report.kind,
                "site": clause.name,
                "explored": 0,
                "divergences": int(failed and clause.name != "valid-history"),
                "invalid_histories": int(failed and clause.name == "valid-history"),
                "problems": json.dumps([f"[{clause.name}] {clause.detail}"] if failed else []),
            }
        )
    return [(PROPERTY_PREFIX + key, value) for record in records for key, value in record.items()]


def gate_backend(node: pytest.Item, factory: Any, options: dict[str, Any]) -> Any:
    """Gate the backend; its report. ChaosFailure listing every failing clause with its reproduction."""
    from strands_durable.errors import DurableError
    from strands_durable.faults.backends import run_backend_gate

    try:
        report = run_backend_gate(factory, **options)
    except DurableError as exc:
        raise ChaosFailure(str(exc)) from None
    except TypeError as exc:
        raise ChaosFailure(f"gate_backend: {exc}") from None
    node.user_properties.extend(properties(report))
    if not report.passed:
        lines = [f"{c.name}: {c.detail}\n  reproduce: {c.reproduce}" for c in report.failed]
        raise ChaosFailure(f"backend {report.backend} reached level {report.level}; failed:\n" + "\n".join(lines))
    return report
