"""Golden runs shared between pytest-xdist workers: each workflow's golden run is computed once in the session, by
one worker, and read back by the other from its file form; a torn, corrupt, foreign or stale file is never used."""

from __future__ import annotations

import functools
import hashlib
import pickle
from pathlib import Path

import pytest

from strands_durable.faults.classes.explore import explore_point
from strands_durable.faults.golden_file import (
    FORMAT,
    GoldenFileError,
    SharedGoldens,
    dump_golden,
    golden_key,
    golden_record,
    load_golden,
)
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget, spec_target
from strands_durable.faults.suite import ChaosSettings, ChaosSuite
from tests.plugin.support import RELEASE_PLAN, RESEARCH, add_research_spec, summary


@pytest.fixture(scope="module")
def research(tmp_path_factory: pytest.TempPathFactory) -> WorkflowGoldenRun:
    return run_golden(spec_target(RESEARCH), tmp_path_factory.mktemp("golden") / "research")


def test_a_golden_run_read_back_from_its_file_explores_its_points_as_the_original(
    research: WorkflowGoldenRun, tmp_path: Path
) -> None:
    key = golden_key(research.target)
    assert key is not None
    loaded = load_golden(dump_golden(key, research), key, spec_target(RESEARCH), tmp_path / "loaded")
    assert [p.point for p in loaded.points] == [p.point for p in research.points]
    assert [(p.journal_length, p.digest, p.completed, p.outcome_unknown) for p in loaded.points] == [
        (p.journal_length, p.digest, p.completed, p.outcome_unknown) for p in research.points
    ]
    assert (loaded.journal, loaded.spec_snapshot, loaded.meta) == (
        research.journal,
        research.spec_snapshot,
        research.meta,
    )
    assert loaded.comparable == research.comparable and loaded.commits == research.commits
    assert loaded.workspace.changes == research.workspace.changes
    assert (loaded.problems, loaded.failure, loaded.untaken_edges) == (research.problems, None, [])
    assert loaded.checkpoint_states.keys() == research.checkpoint_states.keys()
    for point_id in research.point_ids[::15]:
        ours = explore_point(loaded, point_id, tmp_path / "loaded" / "points")
        theirs = explore_point(research, point_id, tmp_path / "original" / "points")
        assert ours.ok and (ours.fired, ours.runs, ours.converged_at) == (
            theirs.fired,
            theirs.runs,
            theirs.converged_at,
        )


def _counting(target: ChaosTarget, workdir: Path, runs: list[str]) -> WorkflowGoldenRun:
    runs.append(target.spec_path.name)
    return run_golden(target, workdir)


def test_a_corrupt_torn_foreign_or_classy_golden_file_is_computed_again_and_replaced(
    research: WorkflowGoldenRun, tmp_path: Path
) -> None:
    shared = SharedGoldens(tmp_path / "goldens")
    shared.directory.mkdir()
    target = spec_target(RESEARCH)
    key = golden_key(target)
    assert key is not None
    path = shared.directory / f"{key}.golden"
    good = dump_golden(key, research)
    assert good.count(b"step[0]") > 1
    record = golden_record(research)
    classy = pickle.dumps({**record, "meta": Path("/")})  # a whole record, but naming a class: refused, not imported
    other_key = golden_key(spec_target(RELEASE_PLAN))
    assert other_key is not None

    def framed(payload: bytes) -> bytes:
        return b"\n".join([FORMAT, key.encode(), hashlib.sha256(payload).hexdigest().encode(), payload])

    bad_files = {
        "corrupt": good.replace(b"step[0]", b"step[9]", 1),  # a bit flipped: still unpickles, wrongly
        "torn": good[: len(good) // 2],
        "another format": b"strands-chaos-golden 0" + good[len(FORMAT) :],
        "another key": dump_golden(other_key, research),
        "a class named": framed(classy),
        "not a record": framed(pickle.dumps(["points"])),
        "a record missing a field": framed(pickle.dumps({k: v for k, v in record.items() if k != "journal"})),
    }
    for why, data in bad_files.items():
        with pytest.raises(GoldenFileError):
            load_golden(data, key, target, tmp_path / why)
        path.write_bytes(data)
        runs: list[str] = []
        golden = shared.golden(target, tmp_path / why, functools.partial(_counting, target, tmp_path / why, runs))
        assert runs == [RESEARCH.name], why  # computed again, not read
        assert [p.id for p in golden.points] == research.point_ids
        again: list[str] = []
        shared.golden(
            target, tmp_path / f"{why}-again", functools.partial(_counting, target, tmp_path / "unused", again)
        )
        assert again == [], why  # the file was replaced by a good one: read now


def test_a_shared_directory_that_cannot_be_made_leaves_each_process_its_own_golden_run(
    research: WorkflowGoldenRun, tmp_path: Path
) -> None:
    (tmp_path / "a-file").write_text("")
    shared = SharedGoldens(tmp_path / "a-file" / "goldens")  # under a file: makedirs fails (as on another host)
    target = spec_target(RESEARCH)
    runs: list[str] = []
    golden = shared.golden(target, tmp_path / "own", functools.partial(_counting, target, tmp_path / "own", runs))
    assert runs == [RESEARCH.name] and golden.point_ids == research.point_ids


def test_a_prepared_golden_run_is_handed_only_to_the_same_target(tmp_path: Path) -> None:
    """A worker prepares the spec file's golden run; the fixture running the same spec with its own variables
    gets a golden run of its own, not the prepared one."""
    suite = ChaosSuite(ChaosSettings(schedules=0), workdir=tmp_path / "suite", shared=tmp_path / "goldens")
    suite.prepare_goldens([RESEARCH])
    other = suite.golden(suite.target(RESEARCH, variables={"topic": "tidal power"}))
    assert other.meta["variables"]["topic"] == "tidal power"
    same = suite.golden(suite.target(RESEARCH))
    assert same.meta["variables"]["topic"] != "tidal power"
    assert same.point_ids != other.point_ids or same.comparable != other.comparable


def test_the_golden_key_changes_with_every_input_a_golden_run_depends_on(tmp_path: Path) -> None:
    spec = tmp_path / "research.strands.yaml"
    spec.write_text(RESEARCH.read_text())
    base = golden_key(spec_target(spec))
    assert golden_key(spec_target(spec)) == base
    assert golden_key(spec_target(spec, seed=1)) != base
    assert golden_key(spec_target(spec, variables={"topic": "x"})) != base
    assert golden_key(spec_target(spec, full=True)) != base
    assert golden_key(spec_target(spec, hitl_answer="yes")) != base
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("a")
    assert golden_key(spec_target(spec, workspace=workspace)) != base
    spec.write_text(RESEARCH.read_text() + "\n# edited\n")
    assert golden_key(spec_target(spec)) != base
    assert golden_key(spec_target(spec, tools={"mine": print})) is None  # Python tools: never shared


RUN_PROBE = """
import os

from strands_durable.faults import suite
from strands_durable.faults.kit import runs

_real_run, _real_prepare = runs.run_golden, suite.ChaosSuite.prepare_goldens
_worker = ["serial"]


def pytest_configure(config):
    _worker[0] = getattr(config, "workerinput", {}).get("workerid", "serial")


def _log(line):
    with open(os.environ["GOLDEN_RUNS_LOG"], "a") as log:
        log.write(f"{_worker[0]} {line}\\n")


def _counted(target, workdir, **kwargs):
    _log(f"ran {target.spec_path.name}")
    return _real_run(target, workdir, **kwargs)


def _prepare(self, spec_paths):
    _log("prepares " + ",".join(p.name for p in spec_paths))
    return _real_prepare(self, spec_paths)


runs.run_golden = _counted
suite.ChaosSuite.prepare_goldens = _prepare
"""


@pytest.mark.slow
def test_under_xdist_each_golden_run_is_computed_once_and_each_worker_prepares_its_share(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workflows on two workers: each worker first prepares its share of the golden runs (so both compute at
    once), each golden run is computed once in the session (a late worker reads what the other computed, or
    computes it first) and the totals are the same as in one process."""
    add_research_spec(pytester, "a-research.strands.yaml")
    add_research_spec(pytester, "b-release.strands.yaml", source=RELEASE_PLAN)
    pytester.makeconftest(RUN_PROBE)
    log = pytester.path / "golden-runs.log"
    monkeypatch.setenv("GOLDEN_RUNS_LOG", str(log))
    options = [
        "--strands-chaos",
        "--strands-chaos-max-points=3",
        "--strands-chaos-schedules=0",
        "-p",
        "no:cacheprovider",
    ]
    two = pytester.runpytest_subprocess(*options, "-n", "2")
    two.assert_outcomes(passed=12)  # b-release: its layer's other order, its golden run and 3 points in it
    lines = log.read_text().splitlines()
    assert sorted(line for line in lines if " prepares " in line) == [
        "gw0 prepares a-research.strands.yaml",
        "gw1 prepares b-release.strands.yaml",
    ]
    assert sorted(line.split(" ran ")[1] for line in lines if " ran " in line) == [
        "a-research.strands.yaml",
        "b-release.strands.yaml",
        "b-release.strands.yaml",  # its other unit order's golden run: a key of its own, computed once too
    ]
    log.unlink()
    serial = pytester.runpytest_subprocess(*options, "-n", "0")
    assert sorted(log.read_text().splitlines()) == [
        "serial ran a-research.strands.yaml",
        "serial ran b-release.strands.yaml",
        "serial ran b-release.strands.yaml",
    ]
    assert summary(serial) == summary(two)
