"""Units of one run written at the same time by several writers (threads and processes) under unit leases: every
record lands once and the fold equals a serial fold; a later attempt fences an earlier one at once (also one paused
between its lease check and its PUT); a session-wide open waits for a live unit writer and fences a dead one."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from strands_durable import CrashPoints, S3Store
from strands_durable.errors import SessionFenced, SessionInUse
from strands_durable.store.state import SessionState, snapshot
from strands_durable.testing.s3_faults import CountingClient
from tests.conftest import REPO
from tests.s3.support import PausedWriter, as_a_fresh_process, client_for, meta, pause_a_writer, store_for, unit_message

UNITS = ["alpha", "beta", "gamma"]
MESSAGES = 12


def _session(store: S3Store) -> str:
    session = store.create(meta(), b"spec")
    session.close()
    return session.state.session_id


def _write(session: Any, name: str, count: int, *, start: int = 0, work_s: float = 0.005) -> None:
    """Commit messages `start`.. of unit `name`, every third durable, `work_s` apart (a model or tool call)."""
    for index in range(start, start + count):
        session.commit([unit_message(name, index)], durable=index % 3 == 2)
        time.sleep(work_s)


def _finish(session: Any, name: str) -> None:
    session.commit([{"type": "unit", "unit": f"task:{name}", "record": {"response": f"{name} done"}}])
    session.close()


def _records(store: S3Store, session_id: str) -> list[dict[str, Any]]:
    return [line.record for line in store.read(session_id).records]


def _content(state: SessionState) -> dict[str, Any]:
    """What the fold holds, without where records landed (seq numbers, sync marks, times)."""
    data = snapshot(state)
    data.pop("synced_seq")
    for conv in data["conversations"].values():
        conv.pop("seqs")
    return data


def _serial_fold(store: S3Store, names: list[str], count: int) -> dict[str, Any]:
    """The same units written one after another by one writer."""
    session = store.create(meta(), b"spec")
    for name in names:
        _write(session, name, count)
        session.commit([{"type": "unit", "unit": f"task:{name}", "record": {"response": f"{name} done"}}])
    session.close()
    expected = _content(store.load(session.state.session_id))
    return expected


def _assert_all_landed_once(store: S3Store, session_id: str, names: list[str], count: int) -> None:
    state = store.load(session_id)  # a duplicated or missing message would not fold (index out of order)
    for name in names:
        conv = state.conversations[f"task:{name}:agent"]
        assert [m["content"][0]["text"] for m in conv.messages] == [f"{name} says {i}" for i in range(count)]
        assert state.units[f"task:{name}"]["response"] == f"{name} done"
    seqs = [record["seq"] for record in _records(store, session_id)]
    assert seqs == list(range(len(seqs))), "records are contiguous and each once"
    without_meta = {k: v for k, v in _content(state).items() if k != "meta"}
    serial = {k: v for k, v in _serial_fold(store, names, count).items() if k != "meta"}
    assert without_meta == serial


def _interleaved(store: S3Store, session_id: str) -> int:
    """How often consecutive records come from different writers (0: the writers took turns unit by unit). A
    writer reads the session only at its open and after a lost race, so beyond one change per writer (records
    committed before it opened) each change is a lost race: more than len(UNITS) means races were lost."""
    writers = [record.get("writer") for record in _records(store, session_id) if record["events"]]
    return sum(1 for a, b in itertools.pairwise(writers) if a != b)


def test_unit_writers_in_threads_commit_at_once_and_fold_as_one_writer(s3_server, space):
    setup = store_for(s3_server, space)
    session_id = _session(setup)
    start = threading.Barrier(len(UNITS))
    failures: list[BaseException] = []

    def writer(name: str) -> None:
        try:
            session = store_for(s3_server, space).open_unit(session_id, unit=f"task:{name}", attempt=1)
            start.wait(10)
            _write(session, name, MESSAGES)
            _finish(session, name)
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(name,)) for name in UNITS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures, failures
    assert _interleaved(setup, session_id) > len(UNITS), "the writers did not overlap"
    _assert_all_landed_once(setup, session_id, UNITS, MESSAGES)


def test_a_lost_race_with_held_records_leaves_the_writer_state_a_reader_folds(s3_server, space):
    store = store_for(s3_server, space)
    session_id = _session(store)
    first = store.open_unit(session_id, unit="task:alpha", attempt=1)
    second = store_for(s3_server, space).open_unit(session_id, unit="task:beta", attempt=1)
    first.commit([unit_message("alpha", 0)], durable=False)  # held: folded at the seq the sibling takes next
    second.commit([unit_message("beta", 0)])
    second.commit([unit_message("beta", 1)])
    first.commit([unit_message("alpha", 1)])  # lost race: the held record is renumbered after the sibling's
    stored = store.read(session_id).state
    assert first.state.seq == stored.seq
    assert snapshot(first.state) == snapshot(stored), "the writer's state (each message's seq) is what a reader folds"
    assert first.state.conversations["task:alpha:agent"].seqs == stored.conversations["task:alpha:agent"].seqs
    first.close()
    second.close()


@pytest.mark.parametrize("held", [False, True], ids=["plain", "with-held-records"])
def test_a_lost_race_reads_only_the_commits_after_the_writer_last_record(s3_server, space, held):
    """A lost race costs a LIST and a GET per commit object that landed since the writer's last record, however
    long the session: not a read of its checkpoint and every commit since."""
    store = store_for(s3_server, space, checkpoint_every=16)
    session = store.create(meta(), b"spec")
    for index in range(40):  # a long history before the units run, compacted at 16 and 32
        session.commit([unit_message("setup", index)])
    session.close()
    session_id = session.state.session_id
    assert len(list(store.objects.list(store.keys.checkpoints(session_id)))) == 1
    counting = CountingClient(client_for(s3_server))
    first = store_for(s3_server, space, client=counting).open_unit(session_id, unit="task:alpha", attempt=1)
    second = store_for(s3_server, space).open_unit(session_id, unit="task:beta", attempt=1)
    first.commit([unit_message("alpha", 0)], durable=not held)
    for index in range(3):
        second.commit([unit_message("beta", index)])
    as_a_fresh_process()  # as on two machines: beta's commits are not in first's memory
    counting.reset()
    first.commit([unit_message("alpha", 1)])  # lost race at the key of beta's first commit
    # beta's three commits, nothing before; with held records also our checkpoint, to renumber them against
    assert counting.counts["get_object"] == 3 + held, dict(counting.counts)
    assert counting.counts["list_objects_v2"] <= 2, dict(counting.counts)  # after our key; the checkpoints check
    assert counting.counts["put_object"] == 2, dict(counting.counts)  # refused once, then landed
    stored = store.read(session_id).state
    assert snapshot(first.state) == snapshot(stored), "the short read folds to what a reader folds"
    first.close()
    second.close()


def _unit_child(space: Any, session_id: str, name: str, attempt: int, count: int, *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "tests.s3.unit_child", space.url, session_id, f"task:{name}", str(attempt)]
    return subprocess.Popen(
        [*command, str(count), *extra], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.fixture
def child_env(s3_env, monkeypatch):
    import os

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO / "src"), str(REPO)]))


def test_unit_writers_in_processes_commit_at_once_and_fold_as_one_writer(s3_server, space, child_env, tmp_path):
    store = store_for(s3_server, space)
    session_id = _session(store)
    go = tmp_path / "go"
    children = [_unit_child(space, session_id, name, 1, MESSAGES, "--go", str(go)) for name in UNITS]
    time.sleep(1.0)  # every child imports and waits for the go file
    go.write_text("go")
    for child in children:
        _out, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
    state = store.load(session_id)
    for name in UNITS:  # the children committed messages only: add each unit's outcome as its own writer would
        assert len(state.conversations[f"task:{name}:agent"].messages) == MESSAGES
        _finish(store.open_unit(session_id, unit=f"task:{name}", attempt=2), name)
    assert _interleaved(store, session_id) > len(UNITS), "the processes did not overlap"
    _assert_all_landed_once(store, session_id, UNITS, MESSAGES)


def test_a_later_attempt_takes_the_unit_at_once_and_fences_the_earlier_one(s3_server, space):
    store = store_for(s3_server, space, lease_ttl_s=30)
    session_id = _session(store)
    earlier = store.open_unit(session_id, unit="task:alpha", attempt=1)
    sibling = store_for(s3_server, space).open_unit(session_id, unit="task:beta", attempt=1)
    earlier.commit([unit_message("alpha", 0)])
    began = time.monotonic()
    later = store_for(s3_server, space).open_unit(session_id, unit="task:alpha", attempt=2)
    assert time.monotonic() - began < 5, "the retried attempt waited for the earlier attempt's 30 s lease"
    fence = _records(store, session_id)[-1]["fence"]
    assert (fence["unit"], fence["attempt"], fence["holder"]) == ("task:alpha", 2, later.lease_token)
    with pytest.raises(SessionFenced, match=r"fence .* for attempt 2 of unit task:alpha") as refused:
        earlier.commit([unit_message("alpha", 1)])
    assert refused.value.exit_code == 17
    with pytest.raises(SessionFenced, match="attempt 2 of unit task:alpha"):
        store.open_unit(session_id, unit="task:alpha", attempt=1)  # an earlier attempt never takes it back
    _write(sibling, "beta", 2)  # a sibling's writer is not fenced by another unit's fence
    _finish(sibling, "beta")
    _write(later, "alpha", 2, start=1)
    _finish(later, "alpha")
    state = store.load(session_id)
    assert [m["content"][0]["text"] for m in state.conversations["task:alpha:agent"].messages] == [
        "alpha says 0", "alpha says 1", "alpha says 2",
    ]  # fmt: skip
    assert state.units["task:beta"]["response"] == "beta done"


def _paused_unit_writer(store: S3Store, session_id: str, *, expire_s: float = 0.0) -> PausedWriter:
    """Attempt 1 of unit task:alpha, its next commit held between its lease check and its PUT; it renews nothing."""

    def open_alpha(bus: CrashPoints) -> Any:
        return store.open_unit(session_id, unit="task:alpha", attempt=1, crash_points=bus)

    first, paused = unit_message("alpha", 0), unit_message("alpha", 1)
    return pause_a_writer(store, open_session=open_alpha, commits=(first, paused), expire_s=expire_s)


def test_an_earlier_attempt_paused_before_its_put_is_refused_after_the_takeover(s3_server, space):
    store = store_for(s3_server, space)
    session_id = _session(store)
    paused = _paused_unit_writer(store_for(s3_server, space), session_id)
    later = store_for(s3_server, space).open_unit(session_id, unit="task:alpha", attempt=2)
    _write(later, "alpha", 3, start=1)
    _finish(later, "alpha")
    assert isinstance(paused.finish(), SessionFenced)
    records = _records(store, session_id)
    fence_at = next(r["seq"] for r in records if (r.get("fence") or {}).get("unit") == "task:alpha")
    assert not [r for r in records if r["seq"] > fence_at and r.get("writer") == paused.session.lease_token]
    assert len(store.load(session_id).conversations["task:alpha:agent"].messages) == 4


def test_an_earlier_attempt_paused_across_a_takeover_and_a_compaction_is_refused(s3_server, space):
    """Its PUT aims at a sibling's key, which a later compaction freed: the PUT lands on the freed key, and the
    writer finds the checkpoint covering it and stops before anything else (a tool) runs."""
    store = store_for(s3_server, space, checkpoint_every=4)
    session_id = _session(store)
    sibling = store.open_unit(session_id, unit="task:beta", attempt=1)
    paused = _paused_unit_writer(store, session_id)
    _write(sibling, "beta", 3, work_s=0)  # one object at the key the paused writer aims at
    _finish(sibling, "beta")
    _finish(store.open_unit(session_id, unit="task:alpha", attempt=2), "alpha")
    whole = store.open(session_id)  # no unit is live: a plan pass, which compacts
    whole.commit([{"type": "status", "status": "running", "reason": "resumed"}])
    whole.close()
    assert list(store.objects.list(store.keys.checkpoints(session_id))), "no compaction happened"
    refused = paused.finish()
    assert isinstance(refused, SessionFenced) and "landed below checkpoint" in str(refused), refused
    state = store.load(session_id)
    assert [m["content"][0]["text"] for m in state.conversations["task:alpha:agent"].messages] == ["alpha says 0"]
    assert len(state.conversations["task:beta:agent"].messages) == 3


def test_an_earlier_attempt_in_another_process_exits_17_and_adds_nothing(s3_server, space, child_env, tmp_path):
    store = store_for(s3_server, space)
    session_id = _session(store)
    marker = tmp_path / "held"
    child = _unit_child(space, session_id, "alpha", 1, 4, "--hold-at", str(marker))
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert child.poll() is None and time.monotonic() < deadline, child.communicate()
        time.sleep(0.02)
    before = len(_records(store, session_id))
    later = store.open_unit(session_id, unit="task:alpha", attempt=2)
    _finish(later, "alpha")
    Path(f"{marker}.go").write_text("go")
    out, err = child.communicate(timeout=60)
    assert child.returncode == 17, (out, err)
    assert err.startswith("Error: Session ") and "fenced out" in err and len(err.strip().splitlines()) == 1
    after = _records(store, session_id)[before:]
    assert [r.get("writer") for r in after] == [later.lease_token] * 3  # its fence, outcome, close; none of the child
    assert "fence" in after[0]
    assert len(store.load(session_id).conversations["task:alpha:agent"].messages) == 3


def test_a_session_wide_open_waits_for_a_live_unit_writer_and_fences_a_dead_one(s3_server, space):
    store = store_for(s3_server, space, lease_ttl_s=2.0, lease_skew_s=0.2)
    session_id = _session(store)
    paused = _paused_unit_writer(store, session_id)  # a frozen worker: it renews nothing from now on
    with pytest.raises(SessionInUse):
        store.open(session_id)  # its lease is still live
    time.sleep(2.5)
    whole = store.open(session_id)  # the unit's lease expired: the session-wide taker fences every unit writer
    fence = _records(store, session_id)[-1]["fence"]
    assert "unit" not in fence and fence["holder"] == whole.lease_token
    assert not list(store.objects.list(store.keys.unit_leases(session_id))), "the dead unit lease is dropped"
    assert isinstance(paused.finish(), SessionFenced)
    whole.commit([{"type": "status", "status": "paused", "reason": "interrupted"}])
    whole.close()
    assert len(store.load(session_id).conversations["task:alpha:agent"].messages) == 1


def test_a_unit_open_waits_while_a_session_wide_holder_is_live_and_list_sees_unit_holders(s3_server, space):
    store = store_for(s3_server, space)
    session_id = _session(store)
    whole = store.open(session_id)
    with pytest.raises(SessionInUse):
        store.open_unit(session_id, unit="task:alpha", attempt=1)
    assert not list(store.objects.list(store.keys.unit_leases(session_id))), "a refused unit open keeps no lease"
    whole.close()
    (summary,) = store.list()
    assert summary.display_status == "running (stale)"
    writer = store.open_unit(session_id, unit="task:alpha", attempt=1)
    (summary,) = store_for(s3_server, space, client=client_for(s3_server)).list()
    assert summary.display_status == "running", "a live unit lease keeps the run from showing stale"
    writer.close()


def test_sessions_show_names_each_live_unit_holder(s3_env, s3_server, space, tmp_path):
    import os
    import socket

    from tests.cli.support import strands_command

    store = store_for(s3_server, space)
    session_id = _session(store)
    alpha = store.open_unit(session_id, unit="task:alpha", attempt=2)
    beta = store_for(s3_server, space).open_unit(session_id, unit="task:beta", attempt=1)
    counting = CountingClient(client_for(s3_server))
    holders = store_for(s3_server, space, client=counting).unit_holders(session_id)
    assert [(h.unit, h.attempt, h.pid, h.host) for h in holders] == [
        ("task:alpha", 2, os.getpid(), socket.gethostname()),
        ("task:beta", 1, os.getpid(), socket.gethostname()),
    ]
    assert counting.counts["list_objects_v2"] == 1, dict(counting.counts)  # one LIST, a GET per unit lease

    shown = strands_command("sessions", "show", session_id, "--json", "--sessions-dir", space.url, cwd=tmp_path)
    document = json.loads(shown.stdout)
    assert document["lease"] is None
    assert document["unit_leases"] == [
        {"unit": "task:alpha", "attempt": 2, "pid": os.getpid(), "host": socket.gethostname()},
        {"unit": "task:beta", "attempt": 1, "pid": os.getpid(), "host": socket.gethostname()},
    ]
    assert document["session"]["display_status"] == "running", "live unit writers: the run is not stale"
    panel = strands_command("sessions", "show", session_id, "--sessions-dir", space.url, cwd=tmp_path).stdout
    assert f"task:alpha (attempt 2): pid {os.getpid()} on host {socket.gethostname()}" in panel
    assert "Units in use by" in panel and "task:beta (attempt 1)" in panel
    alpha.close()
    beta.close()
    gone = strands_command("sessions", "show", session_id, "--json", "--sessions-dir", space.url, cwd=tmp_path)
    assert json.loads(gone.stdout)["unit_leases"] == [], "released unit leases are not shown"


def test_local_sessions_have_no_unit_leases_and_say_so(tmp_path):
    from strands_durable.errors import Unsupported
    from strands_durable.store import open_store

    local = open_store(tmp_path / "sessions")
    session = local.create(meta(), b"spec")
    session.close()
    assert local.unit_leases is False and S3Store.unit_leases is True
    with pytest.raises(Unsupported, match="concurrent units of one run need sessions on S3") as refused:
        local.open_unit(session.state.session_id, unit="task:alpha", attempt=1)
    assert refused.value.exit_code == 18
