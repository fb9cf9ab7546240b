"""The run reporters: the document's lines in plain mode, and the live display on a (forced) terminal."""

from __future__ import annotations

import io

from strands_durable.cli.output import LineReporter, LiveReporter, total_tokens_line


def _drive(reporter) -> None:
    reporter.session_started("a1b2c3d4-0000-4000-8000-000000000000", "demo", resumed=True)
    reporter.warning("⚠ Warning: one\n  two")
    reporter.unit_skipped(0, "researcher", "step[0]")
    reporter.unit_started(1, 2, "writer", "step[1]")
    reporter.unit_completed(1, 2, "writer", "step[1]", 3000)
    reporter.finished("completed", 5000, 8000)


def test_line_reporter_prints_the_documents_resume_lines():
    out, err = io.StringIO(), io.StringIO()
    _drive(LineReporter(out, err))
    assert out.getvalue().splitlines() == [
        "Running workflow: demo",
        "Skipping completed step 0: researcher",
        "Executing step 1: writer",
        "Step 2/2: writer - EXECUTING",
        "Step 2/2: writer - COMPLETE (3000 tokens)",
        "✓ Workflow complete",
        "Total tokens: 8000 (5000 from resumed session + 3000 new)",
    ]
    assert err.getvalue().splitlines() == ["⚠ Warning: one", "  two"]


def test_line_reporter_prints_session_id_first_and_counts_without_a_total():
    out = io.StringIO()
    reporter = LineReporter(out, io.StringIO())
    reporter.session_started("abc", "demo", resumed=False)
    reporter.unit_started(4, None, "node", "node:x")
    reporter.finished("completed", 0, 12)
    assert out.getvalue().splitlines() == [
        "Session ID: abc",
        "Running workflow: demo",
        "Step 5: node - EXECUTING",
        "✓ Workflow complete",
        "Total tokens: 12",
    ]
    assert total_tokens_line(0, 12, resumed=False) == "Total tokens: 12"


def test_live_reporter_keeps_finished_lines_and_clears_the_spinner():
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    reporter = LiveReporter(out, io.StringIO(), console=console)
    _drive(reporter)
    reporter.close()
    text = out.getvalue()
    assert "Executing step 1: writer" in text
    assert "✓ Step 2/2: writer - COMPLETE (3000 tokens)" in text
    assert "Total tokens: 8000 (5000 from resumed session + 3000 new)" in text
    assert reporter._live is None
