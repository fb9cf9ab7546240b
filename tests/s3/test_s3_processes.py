"""Real processes on one S3 session: killed at crash points and resumed by another process, several resumers
racing, and a holder stopped (SIGSTOP) past its lease whose next commit is refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from strands_durable import CrashPoints, S3Store, resume, run_workflow
from strands_durable.errors import SessionInUse
from strands_durable.faults.kit.oracle import RequestLog, comparable, first_difference, stored_violations
from strands_durable.store.layout import new_session_id
from tests.conftest import REPO
from tests.core.support import ExecutionLog, counted_options
from tests.s3.support import client_for, meta, store_for

SPEC = REPO / "tests" / "core" / "specs" / "chain-tools.strands.yaml"
TTL_S, SKEW_S = "1.0", "0.2"

pytestmark = pytest.mark.slow


@pytest.fixture
def short_leases(s3_env, monkeypatch):
    monkeypatch.setenv("STRANDS_S3_LEASE_TTL", TTL_S)
    monkeypatch.setenv("STRANDS_S3_LEASE_SKEW", SKEW_S)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO / "src"), str(REPO)]))


def _child(mode: str, space, root: Path, session_id: str, *extra: str) -> subprocess.Popen:
    root.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "tests.s3.s3_child", mode, str(SPEC), space.url, str(root / "out")]
    command += [str(root / "exec.log"), session_id, *extra]
    return subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _golden(tmp_path: Path, space) -> tuple[dict, list[str]]:
    seen: list[str] = []
    points = CrashPoints()
    points.subscribe(lambda point: seen.append(point.id))
    log = ExecutionLog(tmp_path / "golden.log")
    options = counted_options(log, RequestLog(), out_dir=tmp_path / "golden", crash_points=points)
    store = S3Store.from_url(space.url)
    outcome = run_workflow(SPEC, options, store=store)
    assert outcome.status == "completed"
    return comparable(store.load(outcome.session_id)), seen


def test_killed_at_crash_points_then_resumed_by_another_process_is_identical(short_leases, space, tmp_path):
    golden, seen = _golden(tmp_path, space)
    tool_executed = [p for p in seen if p.endswith("tool.executed") and "calculator" in p]
    after_commit = [p for p in seen if p.endswith("store.after_commit")]
    points = [  # a paid turn not yet committed, a tool that ran but is not committed, mid-run after a commit
        next(p for p in seen if p.endswith("model.answered")),
        tool_executed[0],
        after_commit[len(after_commit) // 2],
    ]
    children = {}
    for index, point in enumerate(points):
        session_id = new_session_id()
        children[point] = (
            session_id,
            tmp_path / f"kill{index}",
            _child("run", space, tmp_path / f"kill{index}", session_id, "--kill-at", point),
        )
    for point, (_sid, _root, child) in children.items():
        _out, err = child.communicate(timeout=120)
        assert child.returncode == -signal.SIGKILL, f"{point}: {err[-2000:]}"
    time.sleep(float(TTL_S) + float(SKEW_S))  # the dead holders' leases expire
    for point, (session_id, root, _child_process) in children.items():
        store = S3Store.from_url(space.url)
        crashed = store.load(session_id)
        assert crashed.status == "running" and stored_violations(crashed) == [], point
        assert {s.session_id: s.display_status for s in store.list()}[session_id] == "running (stale)"
        log = ExecutionLog(root / "exec.log")
        outcome = resume(session_id, counted_options(log, RequestLog()), store=store)
        assert outcome.status == "completed", point
        final = S3Store.from_url(space.url).load(session_id)
        assert first_difference(golden, comparable(final)) is None, point
        assert max(log.counts().values()) <= 2, point  # at-least-once only for the call the kill interrupted
        assert sum(1 for count in log.counts().values() if count == 2) <= 1, point


def test_several_processes_resuming_one_session_exactly_one_proceeds(short_leases, space, tmp_path):
    for round_ in range(2):
        store = S3Store.from_url(space.url)
        session = store.create(meta(), b"spec")  # a stale session that nobody holds
        session_id = session.state.session_id
        session.abandon()
        go = tmp_path / f"go{round_}"
        racers = [
            subprocess.Popen(
                [sys.executable, "-c", _RACER, space.url, session_id, str(go)],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(3)
        ]
        time.sleep(1.5)  # let every racer import and wait at the start line
        go.write_text("go")
        results = [(racer.wait(60), racer.communicate()) for racer in racers]
        winners = [out for code, (out, _err) in results if code == 0]
        losers = [err for code, (_out, err) in results if code == 17]
        assert len(winners) == 1, results
        assert len(losers) == 2 and all("is in use by pid" in err for err in losers), results


_RACER = """
import sys, time
from pathlib import Path
from strands_durable.errors import DurableError
from strands_durable.store.s3 import S3Store
url, session_id, go = sys.argv[1:4]
store = S3Store.from_url(url)
while not Path(go).exists():
    time.sleep(0.005)
try:
    session = store.open(session_id)
except DurableError as exc:
    print(f"Error: {exc}", file=sys.stderr)
    Path(f"{go}.tried.{time.monotonic_ns()}").write_text("refused")
    sys.exit(int(exc.exit_code))
session.commit([{"type": "unit", "unit": "won", "record": {}}])
deadline = time.monotonic() + 30  # hold it until both others have tried (a loaded machine may start them late)
while len(list(Path(go).parent.glob(Path(go).name + ".tried.*"))) < 2 and time.monotonic() < deadline:
    time.sleep(0.01)
session.close()
"""


def _race(store, session_id: str, barrier: threading.Barrier, results: list) -> None:
    barrier.wait()
    try:
        results.append(store.open(session_id))
    except SessionInUse as exc:
        results.append(exc)


def test_racing_opens_in_threads_give_exactly_one_holder_every_time(s3_server, space):
    client = client_for(s3_server)  # boto3 clients are thread-safe; each racer has its own store
    for _ in range(3):
        session = store_for(s3_server, space, client=client).create(meta(), b"spec")
        session_id = session.state.session_id
        session.abandon()
        barrier = threading.Barrier(8)
        results: list[object] = []
        stores = [store_for(s3_server, space, client=client) for _ in range(8)]
        threads = [threading.Thread(target=_race, args=(st, session_id, barrier, results)) for st in stores]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        opened = [r for r in results if not isinstance(r, SessionInUse)]
        assert len(opened) == 1 and len(results) == 8
        opened[0].close()


def test_a_holder_stopped_past_its_lease_is_refused_its_next_commit(short_leases, space, tmp_path):
    session_id = new_session_id()
    root = tmp_path / "stopped"
    marker = root / "holding"
    child = _child("run", space, root, session_id, "--hold-at", str(marker))
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    child.send_signal(signal.SIGSTOP)
    try:
        time.sleep(float(TTL_S) + float(SKEW_S) + 0.3)
        store = S3Store.from_url(space.url)
        log = ExecutionLog(tmp_path / "taker.log")
        outcome = resume(session_id, counted_options(log, RequestLog(), out_dir=tmp_path / "taker"), store=store)
        assert outcome.status == "completed"
    finally:
        child.send_signal(signal.SIGCONT)
    Path(f"{marker}.go").write_text("go")
    _out, err = child.communicate(timeout=60)
    assert child.returncode == 17, err[-2000:]
    assert f"Session {session_id} was taken over by another process (fenced out)" in err
    final = S3Store.from_url(space.url).load(session_id)
    assert final.status == "completed" and stored_violations(final) == []
