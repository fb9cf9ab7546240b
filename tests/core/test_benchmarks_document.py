"""docs/benchmarks.md holds the current figures: one table per area, each with the command that reproduces it, no
path of the machine they were measured on, at most 250 lines (how the figures came about is in git's history)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
MACHINE_PATH = re.compile(r"(?<![\w.<])/(?:work|tmp|home|root)\b")
BENCH_COMMAND = re.compile(r"python bench/\w+\.py|python bench_\w+\.py")


def sections(text: str) -> dict[str, str]:
    """Each `## ` section's title and body."""
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_it_is_at_most_250_lines() -> None:
    assert len(BENCHMARKS.read_text().splitlines()) <= 250


def test_it_names_no_path_of_a_machine() -> None:
    found = [line for line in BENCHMARKS.read_text().splitlines() if MACHINE_PATH.search(line)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("title", sorted(sections(BENCHMARKS.read_text())))
def test_each_area_has_a_table_and_the_command_that_reproduces_it(title: str) -> None:
    body = sections(BENCHMARKS.read_text())[title]
    assert re.search(r"^\|.*\|$", body, flags=re.MULTILINE), f"{title}: no table"
    assert BENCH_COMMAND.search(body), f"{title}: no bench command"


@pytest.mark.parametrize(
    ("line", "machine"),
    [
        ("`BENCH_DIR=/work python bench_durability.py`", True),
        ("git archive 5526c56 examples | tar -x -C /tmp/cp", True),
        ("`BENCH_DIR=<ext4 dir> python bench_durability.py`", False),
        ("scratch on `/dev/shm` when writable", False),
    ],
)
def test_the_machine_path_check(line: str, machine: bool) -> None:
    assert bool(MACHINE_PATH.search(line)) is machine
