"""The gate proves itself: each seeded-bug backend of `strands_durable.testing.backends` fails the clause it was
seeded for and no other clause that the correct backend of the same kind passes (the correct repository and
storage fail some clauses through the SDK's managers that drive them: those are the SDK layer's, and a bug may
even hide one, as a write-behind buffer that loses whole exchanges never stores a broken one). `two-resumers` is
judged on every row: its race is in lockstep (faults/backends/resumers.py), so its verdict is the same every run."""

from __future__ import annotations

from typing import Any

import pytest

from strands_durable.faults.backends import BackendReport, run_backend_gate
from strands_durable.faults.backends.report import CLAUSES
from strands_durable.testing import backends

pytestmark = pytest.mark.slow
EVERY = 6  # every 6th crash point: each seeded bug shows at many points; the full gate is the bench's
HANG_POINTS = [  # a point where the resume finds an invocation pending (the hang), and one where it does not
    "hook/message:user:last/store.before_commit",
    "hook/invocation:last/unit.after#2",
]
OPTIONS: dict[str, dict[str, Any]] = {"hanging_manager": {"points": HANG_POINTS, "run_limit_s": 15}}
_REFERENCES: dict[tuple[str, str], BackendReport] = {}


def outcomes(report: BackendReport) -> dict[str, str]:
    return {c.name: c.outcome for c in report.clauses}


def gate(name: str, options: dict[str, Any]) -> BackendReport:
    return run_backend_gate(getattr(backends, name), name=name, **({"every": EVERY} | options))


def reference_for(kind: str, name: str) -> BackendReport:
    options = OPTIONS.get(name, {})
    key = (kind, repr(sorted(options.items())))
    if key not in _REFERENCES:
        _REFERENCES[key] = gate(backends.REFERENCES[kind], options)
    return _REFERENCES[key]


@pytest.mark.long
@pytest.mark.parametrize(("name", "clause"), sorted(backends.SEEDED.items()))
def test_a_seeded_bug_fails_its_clause_and_no_other_the_correct_backend_passes(name: str, clause: str) -> None:
    report = gate(name, OPTIONS.get(name, {}))
    reference = reference_for(report.kind, name)
    assert outcomes(reference)[clause] == "pass", reference.table()
    assert outcomes(report)[clause] == "fail", report.table()
    newly_failed = {c for c, outcome in outcomes(report).items() if outcome == "fail" != outcomes(reference)[c]}
    assert newly_failed == {clause}, f"{report.table()}\n\nthe correct backend:\n{reference.table()}"


def test_every_clause_a_bug_can_break_has_a_seeded_bug() -> None:
    """Every clause of the manager level (the crash clauses and two-resumers) and the beyond-the-contract ones."""
    assert set(backends.SEEDED.values()) >= {*CLAUSES, "repository-create-exclusive", "storage-write-atomic"}
