"""A crash (an in-process BaseException) at every crash point of a tool-using chain, then a resume in fresh
objects, yields the uninterrupted run: identical outputs and histories, no committed tool run twice, no
committed model turn requested twice, and a stored history that was valid at the moment of the crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from strands_durable.faults.oracle import (
    comparable,
    first_difference,
)
from tests.core.support import crash_and_resume, golden_run

SPEC = Path(__file__).parent / "specs" / "chain-tools.strands.yaml"


def _files(directory: Path) -> dict[str, bytes]:
    """Every file under an output directory with its bytes (no temp file may be left, no extra file written)."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def explore(root: Path, select=lambda point: True) -> tuple[list[str], int]:
    """Crash at every selected point of the golden run and resume; the failures found and points explored."""
    golden, points = golden_run(root / "golden", SPEC)
    golden_files = _files(root / "golden" / "out")
    assert golden_files, "the golden run writes an artifact"
    chosen = [p for p in points if select(p)]
    failures = []
    for index, target in enumerate(chosen):
        problems, final = crash_and_resume(root / f"p{index}", target, SPEC)
        difference = first_difference(golden, comparable(final))
        if difference:
            problems.append(f"differs from the uninterrupted run at {difference}")
        if final.status == "completed" and _files(root / f"p{index}" / "out") != golden_files:
            problems.append(f"output directory holds {_files(root / f'p{index}' / 'out')}, expected {golden_files}")
        failures += [f"{target}: {p}" for p in problems]
    return failures, len(chosen)


@pytest.mark.slow
def test_crash_at_every_point_resumes_to_the_uninterrupted_run(tmp_path: Path) -> None:
    _, points = golden_run(tmp_path / "probe", SPEC)
    assert len(points) > 80, "the chain should expose unit, model, tool and store crash points"
    sites = {p.split("/")[-1].split("#")[0] for p in points}
    assert {
        "unit.before",
        "unit.after",
        "model.before",
        "model.answered",
        "tool.before",
        "tool.executed",
        "tool.committed",
        "store.before_commit",
        "store.after_commit",
    } <= sites
    failures, explored = explore(tmp_path)
    assert explored == len(points)
    assert not failures, "\n".join(failures[:20])


# -- the oracle catches real bugs: each mutation below must make the exploration fail ------------------------


def _tool_points(point: str) -> bool:
    return "tool.committed" in point or point.endswith("unit.after")


def test_oracle_catches_a_store_that_forgets_tool_results(tmp_path: Path, monkeypatch) -> None:
    from strands_durable.store import state as state_module

    monkeypatch.setitem(state_module._HANDLERS, "tool_result", lambda state, event: None)
    failures, explored = explore(tmp_path, _tool_points)
    assert explored > 0
    assert any("executed 2 times" in f for f in failures), failures[:5]


def test_oracle_catches_a_store_that_loses_its_last_commit(tmp_path: Path, monkeypatch) -> None:
    from strands_durable.store import local
    from strands_durable.store.journal import JournalContents

    real = local.read_journal

    def forgetful(path, data):
        contents = real(path, data)
        if len(contents.records) <= 2:
            return contents
        last_start = data.rstrip(b"\n").rfind(b"\n") + 1  # drop the last record as if it never reached disk
        return JournalContents(contents.records[:-1], last_start, torn_tail=True)

    monkeypatch.setattr(local, "read_journal", forgetful)
    failures, explored = explore(tmp_path, lambda p: p.endswith("tool.committed"))
    # the tool result was the last commit before each crash: lost, it runs again though it is on disk
    assert explored > 0
    assert any("executed 2 times (committed: True)" in f for f in failures), failures[:5]


def test_oracle_catches_a_runner_that_reruns_finished_units(tmp_path: Path, monkeypatch) -> None:
    from strands_durable.runner import units

    monkeypatch.setattr(units, "completed", lambda ctx, unit: None)
    failures, _ = explore(tmp_path, lambda p: p.endswith("unit.after"))
    assert any("requested again" in f or "differs" in f for f in failures), failures[:5]
