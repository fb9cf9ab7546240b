"""`strands_chaos.gate_backend(factory)`: the backend gate in a backend author's own test, its clauses in the chaos
report (JSON and HTML), a failing clause failing the test with its reproduction."""

from __future__ import annotations

import json

import pytest

TESTS = """
import pytest

POINT = "hook/message:assistant:last/store.before_commit"


def sdk_file(ctx):
    from strands.session.file_session_manager import FileSessionManager

    return FileSessionManager(ctx.session_id, storage_dir=str(ctx.directory))


@pytest.mark.strands_chaos
def test_ours(strands_chaos):
    report = strands_chaos.gate_backend("strands_durable.testing.backends:durable_manager", points=[POINT])
    assert report.passed


@pytest.mark.strands_chaos
def test_the_sdk_file_manager(strands_chaos):
    strands_chaos.gate_backend(sdk_file, points=[POINT])
"""


def test_a_backend_authors_test_gates_the_backend_and_reports_its_clauses(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_backend=TESTS)
    report = pytester.path / "chaos.json"
    html = pytester.path / "chaos.html"
    result = pytester.runpytest_inprocess(
        "--strands-chaos", f"--strands-chaos-report={report}", f"--strands-chaos-html={html}", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=1, failed=1)
    text = result.stdout.str()
    assert "backend test_backend:sdk_file reached level none; failed:" in text
    assert "valid-history:" in text and "reproduce: strands chaos backend test_backend:sdk_file --point" in text
    items = json.loads(report.read_text())["items"]
    ours, theirs = "backend strands_durable.testing.backends:durable_manager", "backend test_backend:sdk_file"

    def clause(group: str, name: str) -> dict:
        return next(i for i in items if i["workflow"] == group and i.get("point") == f"session-manager/{name}")

    assert clause(theirs, "valid-history")["invalid_histories"] == 1
    assert clause(ours, "valid-history")["invalid_histories"] == 0
    assert clause(ours, "acknowledged-not-lost")["divergences"] == 0
    page = html.read_text()
    assert "backend test_backend:sdk_file" in page and "valid-history" in page
