"""The explorer's shortcuts must see exactly what a fresh reader sees: the judge's journal reading (seeded prefix
state + the records after it), the shared snapshot digester, and copy-on-write state copies."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from strands_durable import LocalStore
from strands_durable.faults.classes.explore import PointOutcome, _Exploration, cut_for
from strands_durable.faults.kit.golden import skip_count
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.snapshot import SnapshotDigest, snapshot_digest, snapshot_view
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.store.journal import JOURNAL_NAME, read_journal
from strands_durable.store.state import copy_state, fold
from tests.plugin.support import RESEARCH


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory):
    return run_golden(ChaosTarget(RESEARCH), tmp_path_factory.mktemp("golden"))


def fresh(ex: _Exploration, upto_seq: int | None = None):
    path = ex.sessions / f"session_{ex.session_id}" / JOURNAL_NAME
    records = read_journal(path, path.read_bytes()).records
    return fold(records if upto_seq is None else records[: upto_seq + 1])


def test_the_judge_reads_what_a_fresh_reader_reads(golden, tmp_path: Path) -> None:
    points = [p for p in golden.points if p.point.site == "tool.executed"][:3]
    assert points
    for target in points:
        ex = _Exploration(golden, tmp_path / target.point.path.replace("/", "_"), PointOutcome([target.id]))
        cut = cut_for(golden, target)
        ex.seed_prefix(cut)
        assert snapshot_view(ex.load()) == snapshot_view(fresh(ex))
        phase = ex.resume(arm=(target.point, 0), converge=False, label="crash")
        assert phase.fired is not None
        crashed = ex.load()
        assert crashed.seq > ex.seed_state.seq  # records after the seed were folded
        assert (
            snapshot_view(crashed)
            == snapshot_view(fresh(ex))
            == snapshot_view(LocalStore(ex.sessions).load(ex.session_id))
        )
        middle = (ex.seed_state.seq + crashed.seq) // 2
        assert snapshot_view(ex.load(upto_seq=middle)) == snapshot_view(fresh(ex, middle))


def test_a_journal_that_no_longer_starts_with_the_seed_is_read_from_scratch(golden, tmp_path: Path) -> None:
    ex = _Exploration(golden, tmp_path, PointOutcome(["x"]))
    ex.seed_prefix(golden.points[len(golden.points) // 2])
    path = ex.sessions / f"session_{ex.session_id}" / JOURNAL_NAME
    data = path.read_bytes()
    first_end = data.index(b"\n") + 1
    second_end = data.index(b"\n", first_end) + 1
    path.write_bytes(data[:second_end])  # a store that rewrote history: only the header and one record are left
    assert ex.load().seq == 1 == fresh(ex).seq


def test_copies_share_messages_but_never_change_the_original(golden) -> None:
    records = read_journal(Path(JOURNAL_NAME), golden.journal).records
    half = len(records) // 2
    original = fold(records[:half])
    before = copy.deepcopy(snapshot_view(original))
    copied = fold(records[half:], copy_state(original))
    assert snapshot_view(original) == before
    assert snapshot_view(copied) == snapshot_view(fold(records))


def test_the_shared_digester_follows_every_change(golden) -> None:
    records = read_journal(Path(JOURNAL_NAME), golden.journal).records
    digester = SnapshotDigest()
    state = fold(records[:3])
    for record in records[3:]:  # one state changed in place, commit by commit
        fold([record], state)
        assert digester.digest(state) == snapshot_digest(state)
    other = fold(records)  # equal content in other objects
    assert digester.digest(other) == snapshot_digest(state)
    key = next(k for k, c in other.conversations.items() if len(c.messages) > 1)
    changed = copy_state(other)
    conv = changed.conversation(key)
    conv.messages[-1] = {**conv.messages[-1], "content": [{"text": "a different answer"}]}  # same length
    assert digester.digest(changed) == snapshot_digest(changed) != snapshot_digest(other)


def test_the_runs_stores_open_the_seeded_journal_as_a_fresh_store_does(golden, tmp_path: Path) -> None:
    for number, target in enumerate(p for p in golden.points if p.point.site in ("tool.executed", "unit.after")):
        ex = _Exploration(golden, tmp_path / str(number), PointOutcome([target.id]))
        cut = cut_for(golden, target)
        ex.seed_prefix(cut)
        assert ex.known is not None and ex.known.data == ex.seed
        assert ex.known.state == fresh(ex)  # the seed's state is the fold of the seed's bytes
        phase = ex.resume(arm=(target.point, 0), converge=False, label="crash")
        assert phase.fired is not None
        seeded = LocalStore(ex.sessions).knowing(ex.known).load(ex.session_id)
        assert seeded.seq > ex.seed_state.seq
        assert seeded == LocalStore(ex.sessions).load(ex.session_id)


def _collections_during_a_point(golden, workdir: Path) -> list[tuple[int, bool]]:
    """The (young threshold, any object frozen) of each collection while one point was explored; afterwards the
    caller's own thresholds are back and nothing stays frozen."""
    import gc

    from strands_durable.faults.classes.explore import explore_point

    seen: list[tuple[int, bool]] = []

    def note(phase: str, _info: dict) -> None:
        if phase == "start":
            seen.append((gc.get_threshold()[0], gc.get_freeze_count() > 0))

    before = gc.get_threshold()
    gc.set_threshold(60, 9, 9)  # the caller's own settings (young collections often), not the defaults
    gc.callbacks.append(note)
    try:
        outcome = explore_point(golden, golden.ordered_ids()[len(golden.points) // 2], workdir)
        assert outcome.ok, outcome.describe()
        assert gc.get_threshold() == (60, 9, 9)
        assert gc.get_freeze_count() == 0
    finally:
        gc.callbacks.remove(note)
        gc.set_threshold(*before)
    return seen


def test_by_default_a_points_runs_leave_the_garbage_collector_alone(golden, tmp_path: Path) -> None:
    """No process tuning unless asked for (faults/kit/collector.py): the runs are collected under the caller's
    settings."""
    seen = _collections_during_a_point(golden, tmp_path)
    assert seen and set(seen) == {(60, False)}


def test_with_the_tuning_on_a_points_runs_are_collected_less(golden, tmp_path: Path) -> None:
    """`--strands-chaos-freeze-gc`: the objects alive before the runs are frozen and the youngest generation is
    collected less often; the caller's settings come back afterwards."""
    from strands_durable.faults.kit.collector import collect_less_during_points

    untuned = _collections_during_a_point(golden, tmp_path / "untuned")
    collect_less_during_points(True)
    try:
        tuned = _collections_during_a_point(golden, tmp_path / "tuned")
    finally:
        collect_less_during_points(False)
    assert len([c for c in tuned if not c[1]]) <= 1  # at most one, on the way in, before the freeze
    assert (60, True) in tuned  # the runs' garbage, collected while the old objects are still frozen
    assert len(tuned) < len(untuned) / 3


def test_the_state_before_the_first_run_is_the_seeds_as_stored(golden, tmp_path: Path) -> None:
    """The first run's `before` is the seed's own state, not read back: it must be what a fresh reader reads."""
    for number, target in enumerate(golden.points[:: max(1, len(golden.points) // 6)]):
        ex = _Exploration(golden, tmp_path / str(number), PointOutcome([target.id]))
        ex.seed_prefix(cut_for(golden, target))
        before = ex.seeded()
        assert before == fresh(ex) == LocalStore(ex.sessions).load(ex.session_id)
        assert before.meta["runtime"]["out_dir"] == str(ex.out_dir.resolve())  # this run's, not the golden run's


def test_the_state_before_the_first_run_is_read_when_the_seed_is_not_known(golden, tmp_path: Path) -> None:
    ex = _Exploration(golden, tmp_path, PointOutcome(["x"]))
    ex.seed_prefix(golden.points[len(golden.points) // 2])
    ex.known = None  # a seed the runs' stores read in full (an invalid one): so does the explorer
    path = ex.sessions / f"session_{ex.session_id}" / JOURNAL_NAME
    data = path.read_bytes()
    path.write_bytes(data[: data.index(b"\n", data.index(b"\n") + 1) + 1])
    assert ex.seeded().seq == 1 == fresh(ex).seq


def test_the_state_up_to_the_converged_commit_is_read_again_unless_it_is_the_last(golden, tmp_path: Path) -> None:
    target = golden.points[-1]
    ex = _Exploration(golden, tmp_path, PointOutcome([target.id]))
    ex.seed_prefix(None)  # from the start, so the run commits many records before it crashes at the last point
    phase = ex.resume(arm=(target.point, skip_count(golden, target, 0)), converge=False, label="crash")
    assert phase.fired is not None
    stored = ex.load()
    assert ex.stored_upto(stored, stored.seq) is stored  # the whole journal up to its last record: no second read
    earlier = ex.seed_state.seq + 1
    assert earlier < stored.seq
    again = ex.stored_upto(stored, earlier)
    assert again.seq == earlier
    assert snapshot_view(again) == snapshot_view(fresh(ex, earlier)) != snapshot_view(stored)
