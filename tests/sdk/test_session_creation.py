"""Creating a session is atomic as seen from outside: a kill at any step leaves `session_<id>/` whole or absent (never
an id that no later process can use), leftovers are cleared by the next creation of the id unless a live process
holds them, and two processes creating one id at the same moment make exactly one session."""

from __future__ import annotations

import fcntl
import functools
import os
import time
from pathlib import Path
from typing import Any

import pytest

from strands_durable import LocalStore
from strands_durable.errors import DurableError, ExitCode, SessionExists, SessionInUse, UsageError
from strands_durable.faults.classes.compound import KillingFileOps
from strands_durable.faults.kit.forking import fork_child, wait_child
from strands_durable.history import normalize
from strands_durable.store.fileops import FileOps
from strands_durable.store.local_create import is_staging_name

from .support import PROMPTS, World

SESSION = "expenses-1"
META = {"workflow_name": "trip", "pattern": "agent", "variables": {}, "runtime": {}}


class RenameTogether(FileOps):
    """Real file operations that hold a staging directory's rename until `count` processes have staged theirs."""

    def __init__(self, gate: Path, count: int) -> None:
        self.gate, self.count = gate, count

    def rename(self, src: Path, dst: Path) -> None:
        if is_staging_name(src.name):
            (self.gate / str(os.getpid())).touch()
            deadline = time.monotonic() + 20
            while len(list(self.gate.iterdir())) < self.count and time.monotonic() < deadline:
                time.sleep(0.005)
        super().rename(src, dst)


def _outcome(body: Any) -> int:
    try:
        body()
    except DurableError as exc:
        return int(exc.exit_code)
    return 0


def _whole_or_absent(root: Path) -> None:
    """What another process sees: no `session_<id>` at all, or one whose journal holds the session's header."""
    directory = root / f"session_{SESSION}"
    if directory.exists():
        assert LocalStore(root).load(SESSION).meta["session_id"] == SESSION
        assert LocalStore(root).session_ids() == [SESSION]


def _create_killed_at(root: Path, at: int) -> int:
    LocalStore(root, fileops=KillingFileOps(at)).create(dict(META), b"", session_id=SESSION).close()
    return 0


def test_a_kill_at_every_step_of_creating_a_session_leaves_it_whole_or_absent_and_the_id_usable(tmp_path):
    reference = World(tmp_path / "reference")
    reference_agent = reference.agent()
    reference_agent(PROMPTS[0])
    at = 0
    while True:
        at += 1
        world = World(tmp_path / f"k{at}")

        ended = wait_child(fork_child(functools.partial(_create_killed_at, world.sessions, at)))
        _whole_or_absent(world.sessions)
        # the next process to use the id, through the manager as a user's script would: it works
        agent = world.agent()
        agent(PROMPTS[0])
        assert normalize(agent.messages) == normalize(reference_agent.messages)
        assert [s.session_id for s in LocalStore(world.sessions).list()] == [SESSION]
        hidden = [p.name for p in world.sessions.iterdir() if p.name != f"session_{SESSION}"]
        assert all(is_staging_name(name) for name in hidden), hidden
        if ended.signal is None:  # the creation ran to its end: every step was a kill point
            assert ended.code == 0
            break
    assert at > 8, "the creation made fewer file operations than expected"


def _half_created(root: Path) -> Path:
    """What a creation of an earlier version left when killed before its journal: the id's directory with the
    lease files and the spec snapshot, no journal."""
    directory = root / f"session_{SESSION}"
    directory.mkdir(parents=True)
    (directory / "lease.lock").write_bytes(b"")
    (directory / "lease.json").write_text('{"pid": 1, "host": "elsewhere", "started_at": 0}')
    (directory / "spec_snapshot.yaml").write_bytes(b"")
    return directory


def test_a_half_created_directory_is_cleared_by_the_next_creation_of_its_id(tmp_path):
    world = World(tmp_path / "sessions")
    _half_created(world.sessions)
    agent = world.agent()
    agent(PROMPTS[0])
    assert len(LocalStore(world.sessions).load(SESSION).conversations["default"].messages) == 4
    assert sorted(p.name for p in world.sessions.iterdir()) == [f"session_{SESSION}"]


def test_a_half_created_directory_a_live_process_holds_is_left_alone(tmp_path):
    world = World(tmp_path / "sessions")
    directory = _half_created(world.sessions)
    held = os.open(directory / "lease.lock", os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)  # a live creator (or deleter) is still at work on it
    try:
        with pytest.raises(SessionInUse) as refused:
            world.agent()(PROMPTS[0])
        assert refused.value.exit_code == ExitCode.SESSION_UNUSABLE
        assert sorted(p.name for p in directory.iterdir()) == ["lease.json", "lease.lock", "spec_snapshot.yaml"]
    finally:
        os.close(held)


def test_a_directory_that_is_not_ours_is_never_cleared(tmp_path):
    root = tmp_path / "sessions"
    mine = root / f"session_{SESSION}"
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(UsageError, match=r"exists and is not a strands-durable session"):
        LocalStore(root).create(dict(META), b"", session_id=SESSION)
    assert (mine / "notes.txt").read_text() == "keep me"


def test_a_file_where_the_session_directory_goes_is_named_and_kept(tmp_path):
    world = World(tmp_path / "sessions")
    world.sessions.mkdir()
    stray = world.sessions / f"session_{SESSION}"
    stray.write_text("keep me")
    with pytest.raises(UsageError) as refused:
        world.agent()(PROMPTS[0])
    assert str(refused.value) == (
        f"Cannot create session {SESSION}: {stray} exists and is not a strands-durable session (it is not a "
        "directory); move it away or delete it"
    )
    assert stray.read_text() == "keep me"
    assert [p.name for p in world.sessions.iterdir()] == [stray.name], "the staging directory was left behind"


def test_two_processes_creating_one_id_at_the_same_moment_make_exactly_one_session(tmp_path):
    root, gate = tmp_path / "sessions", tmp_path / "gate"
    gate.mkdir()

    def create() -> int:
        store = LocalStore(root, fileops=RenameTogether(gate, 2))
        return _outcome(lambda: store.create(dict(META), b"", session_id=SESSION).close())

    children = [fork_child(create) for _ in range(2)]
    outcomes = sorted(wait_child(child).code for child in children)
    assert outcomes == [0, int(ExitCode.USAGE)], outcomes
    assert LocalStore(root).session_ids() == [SESSION]
    assert sorted(p.name for p in root.iterdir()) == [f"session_{SESSION}"]
    with pytest.raises(SessionExists, match=f"^Session already exists: {SESSION}$"):
        LocalStore(root).create(dict(META), b"", session_id=SESSION)


def test_two_agents_starting_one_new_session_at_once_one_proceeds_the_other_is_told_it_is_in_use(tmp_path):
    world, gate = World(tmp_path / "sessions"), tmp_path / "gate"
    gate.mkdir()
    world.tool_seconds = 1.0  # the winner still holds the session while the loser looks at it

    def invoke() -> int:
        agent = world.agent(store=LocalStore(world.sessions, fileops=RenameTogether(gate, 2)))
        return _outcome(lambda: agent(PROMPTS[0]))

    children = [fork_child(invoke) for _ in range(2)]
    outcomes = sorted(wait_child(child).code for child in children)
    assert outcomes == [0, int(ExitCode.SESSION_UNUSABLE)], outcomes
    assert len(LocalStore(world.sessions).load(SESSION).conversations["default"].messages) == 4
