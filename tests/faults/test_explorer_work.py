"""The explorer's own work per crash point (faults/classes/explore.py): what the golden run already proved is not
proved again per point (a seed's histories, judged once per journal length), a derived crash state is judged on
the seed as written instead of being read back, and the lookups a point makes cost the same early or late in a
long run. Every rule still runs on the state it judges."""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from strands_durable.faults.classes import explore
from strands_durable.faults.classes.explore import explore_point
from strands_durable.faults.kit import judge, snapshot
from strands_durable.faults.kit.golden import WorkflowGoldenRun, cut_for
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.snapshot import SnapshotDigest
from strands_durable.faults.kit.stores import store_at
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.faults.kit.workspace import Files, WorkspaceHistory, read_files
from strands_durable.store.base import read_journal_bytes
from strands_durable.store.state import SessionState, fold
from strands_durable.testing.chain import refining_chain_text
from tests.conftest import EXAMPLES


def _counting_judge(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count the stored-history judgements by what they judge ("seed", "right after the crash at ...")."""
    judged: Counter[str] = Counter()
    stored_valid = judge.stored_valid

    def counted(state: Any, when: str, valid: Any = None) -> list[judge.Problem]:
        judged[when] += 1
        return stored_valid(state, when, valid)

    monkeypatch.setattr(judge, "stored_valid", counted)
    return judged


def test_a_seed_is_judged_once_per_journal_length_and_every_crash_state_is_judged(
    chain_golden: WorkflowGoldenRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged = _counting_judge(monkeypatch)
    reads: Counter[int] = Counter()  # by the outcome of the exploration (a sampled real segment has its own)
    checking: list[bool] = [False]
    check_stored, load = explore._Exploration.check_stored, explore._Exploration.load

    def counted_check(self: explore._Exploration, label: str) -> Any:
        checking[0] = True
        try:
            return check_stored(self, label)
        finally:
            checking[0] = False

    def counted_load(self: explore._Exploration, **options: Any) -> Any:
        if checking[0]:  # the check reads the session from disk
            reads[id(self.outcome)] += 1
        return load(self, **options)

    monkeypatch.setattr(explore._Exploration, "check_stored", counted_check)
    monkeypatch.setattr(explore._Exploration, "load", counted_load)
    seeded: list[int] = []  # the journal length of every seed written
    seed = explore._Exploration._seed

    def recorded_seed(self: explore._Exploration, length: int, files: Any) -> None:
        seeded.append(length)
        seed(self, length, files)

    monkeypatch.setattr(explore._Exploration, "_seed", recorded_seed)
    # a golden run of its own: the seed verdicts it keeps start empty
    golden = WorkflowGoldenRun(**{f: getattr(chain_golden, f) for f in _init_fields(chain_golden)})
    outcomes = [explore_point(golden, point_id, tmp_path / "points") for point_id in golden.ordered_ids()]
    assert all(outcome.ok for outcome in outcomes), [o.describe() for o in outcomes if not o.ok]
    # a prefix of the golden journal folds to the same state whichever point starts from it: judged once
    assert len(seeded) > len(set(seeded)) > 1
    assert judged["seed"] == len(set(seeded))
    for outcome in outcomes:  # every crash the point made is judged as stored, derived ones included
        assert judged[f"right after the crash at {outcome.point_ids[0]}"] >= 1, outcome.point_ids
    derived = [o for o in outcomes if o.segment.startswith("derived")]
    assert derived
    for outcome in derived:  # read from disk: after each real crash and after the last resume, not the seed
        assert reads[id(outcome)] == len(outcome.fired), (outcome.point_ids, outcome.fired)


def _init_fields(golden: WorkflowGoldenRun) -> list[str]:
    import dataclasses

    return [f.name for f in dataclasses.fields(golden) if f.init and f.name not in ("digester", "valid_histories")]


def test_emissions_before_counts_what_a_scan_of_the_golden_run_counts(chain_golden: WorkflowGoldenRun) -> None:
    points = chain_golden.points
    for target in points[:: max(1, len(points) // 40)]:
        site, path = target.point.site, target.point.path
        for start in (0, target.index // 2, target.index, len(points)):
            scanned = sum(1 for p in points[:start] if p.point.site == site and p.point.path == path)
            assert chain_golden.emissions_before(site, path, start) == scanned


def test_a_workspace_is_read_as_rglob_lists_it(tmp_path: Path) -> None:
    root = tmp_path / "workspace"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "deep.txt").write_bytes(b"1")
    (root / "a-b").mkdir()
    (root / "a-b" / "q").write_bytes(b"2")
    (root / "a.txt").write_bytes(b"3")
    (root / "empty").mkdir()
    os.symlink(root / "a.txt", root / "file-link")  # a link to a file is read
    os.symlink(root / "a", root / "dir-link")  # a link to a directory is not entered
    expected = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
    found = read_files(root)
    assert found == expected
    assert list(found) == list(expected)
    assert read_files(tmp_path / "missing") == {}


def _digest_from_scratch(state: SessionState) -> str:
    """The snapshot digest as its definition reads: each conversation's whole normalised view hashed (its messages
    as the hash of their canonical list), then every part of the snapshot."""
    return snapshot._hash(
        {
            "status": state.status,
            "units": state.units,
            "pattern_state": state.pattern_state,
            "conversations": {key: snapshot.conversation_digest(conv) for key, conv in state.conversations.items()},
            "artifacts": {path: info.get("sha256") for path, info in state.artifacts.items()},
            "tokens": state.usage(),
        }
    )


def test_a_conversation_digested_in_pieces_equals_its_whole_view_digested(tmp_path: Path) -> None:
    # one agent for every step: its conversation grows with the chain, and the explored runs branch off it
    spec = tmp_path / "chain.strands.yaml"
    spec.write_text(refining_chain_text(6, one_agent=True))
    golden = run_golden(ChaosTarget(spec), tmp_path / "golden")
    lengths = sorted({p.journal_length for p in golden.points if p.journal_length})
    states = [golden.state_at(length) for length in lengths]
    for point_id in golden.ordered_ids()[::7]:  # what resumed runs committed: the golden prefix, then their own
        explore_point(golden, point_id, tmp_path / "points")
        states.append(store_at(tmp_path / "points" / "run1" / "sessions").load(golden.target.session_id))
    assert max(len(conv.messages) for state in states for conv in state.conversations.values()) > 12
    for order in (states, states[::-1], states[::2] + states[1::2]):
        digester = SnapshotDigest()
        for state in order:
            assert digester.digest(state) == _digest_from_scratch(state)


def test_a_history_found_valid_is_judged_again_once_it_grows_or_is_replaced() -> None:
    state = SessionState()
    conv = state.conversation("c.a", "a")
    conv.messages = [
        {"role": "user", "content": [{"text": "hello"}]},
        {"role": "assistant", "content": [{"text": "hi"}]},
    ]
    valid: judge.ValidHistories = {}
    assert judge.stored_valid(state, "first", valid) == []
    assert judge.stored_valid(state, "again", valid) == []  # the very list, as validated
    conv.messages.append({"role": "assistant", "content": [{"text": "again"}]})  # grown in place: two in a row
    assert [rule for rule, _ in judge.stored_valid(state, "grown", valid)] == ["invalid-history"]
    conv.messages = [{"role": "assistant", "content": [{"text": "first"}]}]  # replaced whole (a repair)
    assert [rule for rule, _ in judge.stored_valid(state, "replaced", valid)] == ["invalid-history"]
    conv.messages = [
        {"role": "user", "content": [{"text": "hello"}]},
        {"role": "assistant", "content": [{"text": "hi"}]},
    ]
    assert judge.stored_valid(state, "equal", valid) == []  # equal to the list found valid: valid


def test_every_golden_state_is_the_fold_of_its_bytes_and_holds_each_message_as_one_object(
    chain_golden: WorkflowGoldenRun,
) -> None:
    golden = WorkflowGoldenRun(**{f: getattr(chain_golden, f) for f in _init_fields(chain_golden)})
    lengths = sorted({p.journal_length for p in golden.points if p.journal_length})
    assert len(lengths) > 8
    first: dict[tuple[str, int], Any] = {}
    # longest first, then spread: states folded from the start and from many different shorter states
    for length in lengths[::-1] + lengths[::3] + lengths[1::2]:
        state = golden.state_at(length)
        fresh = fold(read_journal_bytes(golden.journal[:length]).records)
        assert (state.seq, snapshot.snapshot_view(state)) == (fresh.seq, snapshot.snapshot_view(fresh))
        for key, conv in state.conversations.items():
            for index, message in enumerate(conv.messages):  # so comparing two states' histories takes pointer time
                assert first.setdefault((key, index), message) is message, (length, key, index)


def _tree(root: Path) -> dict[str, Any]:
    """Every entry under `root` by relative path: a directory, a link (where to), or a file (its bytes)."""
    found: dict[str, Any] = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(directory) / name
            relative = str(path.relative_to(root))
            if path.is_symlink():
                found[relative] = ("link", os.readlink(path))
            elif path.is_dir():
                found[relative] = "dir"
            else:
                found[relative] = path.read_bytes()
    return found


def test_a_run_directory_seeded_again_in_place_holds_exactly_what_a_fresh_one_holds(
    chain_golden: WorkflowGoldenRun, tmp_path: Path
) -> None:
    golden = WorkflowGoldenRun(**{f: getattr(chain_golden, f) for f in _init_fields(chain_golden)})
    ids = golden.ordered_ids()
    points = tmp_path / "points"
    base = points / "run1"
    target = golden.point(ids[len(ids) // 2])
    explore._Exploration(golden, points, explore.PointOutcome([target.id])).seed_crash(target, cut_for(golden, target))
    fresh = _tree(base)  # a directory made anew (the first seed of the golden run)
    assert golden.seed_files
    for point_id in ids[:: max(1, len(ids) // 6)]:  # the runs leave leases, views, artifacts behind
        assert explore_point(golden, point_id, points).ok
    session = next((base / "sessions").iterdir())
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept.txt").write_bytes(b"not the run's")
    stale = {
        session / "session.json": b"{}",  # a view a completed run wrote
        session / "agents" / "a" / "messages" / "000001.json": b"{}",
        session / "journal.log": b"another journal",  # a file the seed rewrites, changed
        session / "spec_snapshot.yaml": b"another spec",
        base / "sessions" / "session_other" / "journal.log": b"x",
        base / "out" / "report.md": b"an artifact",
        base / "workspace" / "deep" / "note.txt": b"a tool's file",
        base / "stray.txt": b"?",
    }
    for path, data in stale.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    os.symlink(outside, base / "workspace" / "link")  # removed as a link: what it points at stays
    held = os.open(base / "sessions", os.O_RDONLY)  # held open: its inode number cannot be reused
    try:
        explore._Exploration(golden, points, explore.PointOutcome([target.id])).seed_crash(
            target, cut_for(golden, target)
        )
        assert (base / "sessions").stat().st_ino == os.fstat(held).st_ino  # seeded in place, not made anew
    finally:
        os.close(held)
    assert _tree(base) == fresh
    assert (outside / "kept.txt").read_bytes() == b"not the run's"


def _scanned(history: WorkspaceHistory, index: int) -> Files:
    """`WorkspaceHistory.at` as its definition reads: the last change recorded before the first at `index` or later."""
    found = history.changes[0][1]
    for changed_at, files in history.changes:
        if changed_at >= index:
            break
        found = files
    return found


def test_a_workspace_lookup_finds_what_a_scan_of_the_changes_finds_even_out_of_order() -> None:
    rng = random.Random(7)
    history = WorkspaceHistory({"start": b"0"})
    at = 0
    for number in range(300):
        at += rng.randint(0, 3)
        recorded = at - rng.randint(0, 4) if rng.random() < 0.2 else at  # concurrent tools: a lower index later
        history.changes.append((recorded, {"file": str(number).encode()}))
        if number % 50 == 0:  # grown since the last lookup
            assert history.at(recorded + 1) == _scanned(history, recorded + 1)
    for index in range(-2, at + 3):
        assert history.at(index) == _scanned(history, index), index
    history.changes = [(-1, {}), (5, {"a": b"1"}), (3, {"a": b"2"}), (9, {"a": b"3"})]  # replaced whole (a file)
    for index in range(-1, 12):
        assert history.at(index) == _scanned(history, index), index


def test_the_tools_files_a_seed_writes_are_rewritten_in_place_and_nothing_else_of_the_workspace_is_kept(
    tmp_path: Path,
) -> None:
    files = {os.path.join("notes", "a.txt"): b"the golden run's a", "b.txt": b"b"}
    fresh = tmp_path / "fresh"
    explore.write_files(fresh, files)
    base = tmp_path / "run1"
    sessions, workspace = base / "sessions", base / "workspace"
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"not the run's")
    for path, data in {
        workspace / "notes" / "a.txt": b"a resumed run's a, longer than the seed's",
        workspace / "notes" / "d.txt": b"a tool's other file",
        workspace / "c.txt": b"another",
        sessions / "session_x" / "journal.log": b"a journal the seed rewrites",
    }.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    os.symlink(outside, workspace / "b.txt")  # a kept name that is a link now: removed as a link, written anew
    held = os.open(workspace / "notes" / "a.txt", os.O_RDONLY)  # held open: its inode number cannot be reused
    try:
        explore._Workspace.clear(sessions, frozenset({os.path.join("session_x", "journal.log")}), files.keys())
        explore.write_files(workspace, files)
        assert (workspace / "notes" / "a.txt").stat().st_ino == os.fstat(held).st_ino  # rewritten in place
    finally:
        os.close(held)
    assert _tree(workspace) == _tree(fresh)
    assert not (workspace / "b.txt").is_symlink()
    assert outside.read_bytes() == b"not the run's"
    assert sorted(_tree(sessions)) == ["session_x", os.path.join("session_x", "journal.log")]


def test_the_explorer_makes_at_most_one_store_per_point_and_the_kit_keeps_none(
    chain_golden: WorkflowGoldenRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run directory holds the store of its sessions root and hands it to the seed, the checks and every resume
    (a local store is its configuration only); `store_at` keeps nothing, so a store is held by whoever asked."""
    from strands_durable import LocalStore
    from strands_durable.store.base import KnownJournal

    made: list[LocalStore] = []
    init = LocalStore.__init__

    def counted(self: LocalStore, *args: Any, **options: Any) -> None:
        made.append(self)
        init(self, *args, **options)

    monkeypatch.setattr(LocalStore, "__init__", counted)
    ids = [pid for pid in explore.iter_points(chain_golden) if chain_golden.point(pid).point.site != "unit.before"]
    points = tmp_path / "points"
    explore_point(chain_golden, ids[0], points)  # the root's run directories and its sample's, made once
    made.clear()
    for point_id in ids[1:]:
        assert explore_point(chain_golden, point_id, points).ok
    assert len(made) <= len(ids) - 1, f"{len(made)} stores for {len(ids) - 1} points"

    sessions = tmp_path / "run1" / "sessions"
    sid = chain_golden.target.session_id
    assert store_at(sessions) is not store_at(sessions)  # nothing kept by the kit
    known = KnownJournal(sid, b"", SessionState())
    assert store_at(sessions, known=known) is not store_at(sessions, known=known)
    monkeypatch.setenv("STRANDS_DURABLE_STRICT", "0" if os.environ.get("STRANDS_DURABLE_STRICT") else "1")
    assert store_at(sessions).strict == (os.environ["STRANDS_DURABLE_STRICT"] == "1")  # as the environment says
    run = explore._workspace_of(chain_golden, points).run(1)
    assert run.store(True) is run.store(True)
    assert run.store(True).strict == (os.environ["STRANDS_DURABLE_STRICT"] == "1")  # made again when it changes
    explore._Exploration(chain_golden, tmp_path, explore.PointOutcome(["x"])).seed_prefix(None)
    opened = []
    for _ in range(2):  # one after the other from the run directory's one store, each with its lease and state
        opened.append(explore._workspace_of(chain_golden, tmp_path).run(1).store(True).open(sid))
        opened[-1].abandon()
    assert opened[0] is not opened[1] and opened[0].state is not opened[1].state


def test_a_digest_encodes_artifacts_and_conversation_keys_as_the_snapshot_reads_them() -> None:
    state = SessionState()
    for key in ("b.writer", "a.ünïcode", 'c."quoted"'):
        conv = state.conversation(key, key.split(".")[0])
        conv.messages = [{"role": "user", "content": [{"text": f"hello {key}"}]}]
    state.artifacts = {"z.md": {"sha256": "1" * 64, "size": 3}, "a/ü.md": {"sha256": "2" * 64}}
    digester = SnapshotDigest()
    assert digester.digest(state) == _digest_from_scratch(state)
    state.conversation("a.ünïcode").messages.append({"role": "assistant", "content": [{"text": "hi"}]})
    state.artifacts = {}
    assert digester.digest(state) == _digest_from_scratch(state)


def _garbage_of(run: Any) -> list[Any]:
    """What the cyclic collector finds unreachable once `run()` is over: the objects only a cycle kept alive."""
    import gc

    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run()
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def garbage_of_points(golden: WorkflowGoldenRun, ids: list[str], points: Path) -> list[Any]:
    """What the cyclic collector finds unreachable after exploring `ids` (each must pass); the first point is
    explored once before, so the workflow's one-time exactness sample is not counted."""
    explore_point(golden, ids[0], points)

    def explore_all() -> None:
        for point_id in ids:
            assert explore_point(golden, point_id, points).ok

    return _garbage_of(explore_all)


def test_the_units_a_crash_stopped_leave_no_frames_for_the_collector(tmp_path: Path) -> None:
    """A crash in one job of a parallel layer stops its siblings at their safe points (StopRequested) in their
    threads; the group raises the crash and drops the siblings' exceptions, and with them the frames they unwound,
    which the SDK's frames held in a cycle (its agent, session and state with them) until a collection."""
    golden = run_golden(ChaosTarget(EXAMPLES / "parallel-market-scan.strands.yaml"), tmp_path / "golden")
    ids = [pid for pid in explore.iter_points(golden) if golden.point(pid).point.site == "model.answered"]
    assert len(ids) >= 4
    garbage = garbage_of_points(golden, ids, tmp_path / "points")
    frames = [f"{o.f_code.co_filename}:{o.f_code.co_name}" for o in garbage if type(o).__name__ == "frame"]
    assert not frames, f"{len(frames)} frames in cycles after {len(ids)} points, e.g. {frames[:5]}"
