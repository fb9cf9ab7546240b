"""A crash (an in-process BaseException) at every crash point of a tool-using chain, then a resume in fresh
objects, yields the uninterrupted run: identical outputs and histories, no committed tool run twice, no
committed model turn requested twice, and a stored history that was valid at the moment of the crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.support import crash_and_resume, golden_run

SPEC = Path(__file__).parent / "specs" / "chain-tools.strands.yaml"


def explore(root: Path, select=lambda point: True) -> tuple[list[str], int]:
    """Crash at every selected point of the golden run and resume to the end (the kit judges each: identical
    outputs, histories and artifacts, no extra file in the output directory, no committed tool run again, no
    committed model turn requested again, valid stored histories); the failures found and points explored."""
    golden = golden_run(root / "golden", SPEC)
    assert golden.comparable["artifacts"], "the golden run writes an artifact"
    chosen = [p for p in golden.point_ids if select(p)]
    failures = []
    for index, target in enumerate(chosen):
        failures += [f"{target}: {p}" for p in crash_and_resume(golden, target, root / f"p{index}")]
    return failures, len(chosen)


@pytest.mark.slow
def test_crash_at_every_point_resumes_to_the_uninterrupted_run(tmp_path: Path) -> None:
    probe = golden_run(tmp_path / "probe", SPEC)
    points, sites = probe.point_ids, probe.site_kinds
    assert len(points) > 80, "the chain should expose unit, model, tool and store crash points"
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
    assert any("[tool-rerun]" in f for f in failures), failures[:5]


def test_oracle_catches_a_store_that_loses_its_last_commit(tmp_path: Path, monkeypatch) -> None:
    from strands_durable.store import local
    from strands_durable.store.journal import JournalContents

    real = local.read_journal

    def forgetful(path, data, **kwargs):
        contents = real(path, data, **kwargs)
        if len(contents.records) <= (0 if kwargs.get("first_seq") else 2):  # a tail read after a known prefix
            return contents
        last_start = data.rstrip(b"\n").rfind(b"\n") + 1  # drop the last record as if it never reached disk
        return JournalContents(contents.records[:-1], last_start, torn_tail=True)

    monkeypatch.setattr(local, "read_journal", forgetful)
    failures, explored = explore(tmp_path, lambda p: p.endswith("tool.committed"))
    # the tool result was the last commit before each crash: lost, it runs again though it is on disk
    assert explored > 0
    assert any("[tool-rerun]" in f and "committed tool call" in f for f in failures), failures[:5]


def test_oracle_catches_a_runner_that_reruns_finished_units(tmp_path: Path, monkeypatch) -> None:
    from strands_durable.runner import units

    monkeypatch.setattr(units, "completed", lambda ctx, unit: None)
    failures, _ = explore(tmp_path, lambda p: p.endswith("unit.after"))
    assert any("[model-rerequest]" in f or "[identical]" in f for f in failures), failures[:5]
