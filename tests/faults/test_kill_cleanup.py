"""No `strands-chaos-*` scratch root is left for good: an exception in the parent (Ctrl+C) while a kill child runs
leaves no child behind (one left running would go on writing into the scratch directory its parent removes next,
and may create it again), a forked child dies with its parent, and the roots of killed runs are removed by the next."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from strands_durable.faults.classes.kill import kill_at_random
from strands_durable.faults.kit.findings import FaultRun
from strands_durable.faults.kit.forking import ChildExit, end_child, fork_child, wait_child
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.suite import default_workdir
from strands_durable.runner.signals import StopSignals


class _Interrupted(Exception):
    """What the parent raises while its child runs (as Ctrl+C raises KeyboardInterrupt)."""


@contextlib.contextmanager
def _interrupted_after(seconds: float) -> Iterator[None]:
    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise _Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _children() -> set[int]:
    """This process's children, running or not yet reaped (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                    found.add(int(entry.name))
    return found


class _IgnoresTheSignal(StopSignals):
    """A run that does not stop when asked: the parent's wait for it is what gets interrupted."""

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        return None


@pytest.mark.parametrize(
    ("delay", "handlers"),
    [(30.0, StopSignals), (0.0, _IgnoresTheSignal)],
    ids=["while-waiting-to-signal", "while-waiting-for-the-end"],
)
def test_an_exception_in_the_parent_while_a_kill_child_runs_leaves_no_child(
    chain_golden: WorkflowGoldenRun, tmp_path: Path, delay: float, handlers: type[StopSignals]
) -> None:
    before = _children()
    with pytest.raises(_Interrupted), _interrupted_after(0.5):
        kill_at_random(
            chain_golden, "SIGTERM", delay, tmp_path / "kill", FaultRun("kill", "chain"), 100, handlers=handlers
        )
    assert _children() - before == set()


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie nobody reaped yet counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_forked_childs_own_child_dies_with_it() -> None:
    """A forked worker killed at the end of a session (or a soak's work item) is never there to wait for the kill
    child it forked: that child must not live on, writing into a scratch directory its grandparent removes."""
    read_end, write_end = os.pipe()

    def worker() -> int:
        inner = fork_child(lambda: time.sleep(60))
        os.write(write_end, str(inner).encode())
        time.sleep(60)
        return 0

    outer = fork_child(worker)
    try:
        inner = int(os.read(read_end, 32))
    finally:
        os.close(read_end)
        os.close(write_end)
    assert end_child(outer) == ChildExit(None, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while _alive(inner) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _alive(inner), "the killed worker's own child lives on"


def test_a_new_chaos_scratch_root_removes_those_whose_owner_was_killed(tmp_path: Path, monkeypatch) -> None:
    """A run killed before its cleanup (SIGTERM, SIGKILL, a CI time-out) leaves its `strands-chaos-*` root behind;
    the next run removes it, and leaves alone the roots of live runs and those it cannot tell the owner of."""
    dead = fork_child(lambda: 0)
    assert wait_child(dead) == ChildExit(0, None)
    namespace = "".join(c for c in os.readlink("/proc/self/ns/pid") if c.isdigit())
    start = Path(f"/proc/{os.getpid()}/stat").read_text().rsplit(")", 1)[1].split()[19]
    names = {
        "killed": f"strands-chaos-{dead}.0.{namespace}-x1",
        "live": f"strands-chaos-{os.getpid()}.{start}.{namespace}-x2",
        "unknown": "strands-chaos-made-by-an-older-version",
        "elsewhere": f"strands-chaos-{dead}.0.1-x3",  # another pid namespace: its pid may be a live process there
    }
    for name in names.values():
        (tmp_path / name / "0001-chain" / "kill").mkdir(parents=True)
    monkeypatch.setenv("STRANDS_CHAOS_TMPDIR", str(tmp_path))
    fresh = default_workdir()
    kept = [names["live"], names["unknown"], names["elsewhere"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([fresh.name, *kept])
    assert fresh.name.startswith(f"strands-chaos-{os.getpid()}.{start}.{namespace}-")
    default_workdir()  # this process is alive: its own roots stay
    assert fresh.exists() and (tmp_path / names["live"]).exists()


def test_a_soak_puts_its_scratch_root_where_the_plugin_does_and_sweeps_those_of_killed_runs(
    tmp_path: Path, monkeypatch
) -> None:
    """`strands chaos` (the soak) makes its scratch root like the pytest plugin: owned by name, so a soak killed
    before its cleanup leaves a root the next chaos run removes; its own root is removed when it ends."""
    from strands_durable.faults.soak import soak

    dead = fork_child(lambda: 0)
    assert wait_child(dead) == ChildExit(0, None)
    namespace = "".join(c for c in os.readlink("/proc/self/ns/pid") if c.isdigit())
    (tmp_path / f"strands-chaos-{dead}.0.{namespace}-x1" / "chain").mkdir(parents=True)
    monkeypatch.setenv("STRANDS_CHAOS_TMPDIR", str(tmp_path))
    spec = Path(__file__).parents[2] / "examples" / "chain-research.strands.yaml"
    soak([spec], faults=["interrupt"], progress=False, max_rounds=0)
    assert list(tmp_path.iterdir()) == []  # the killed run's root swept, the soak's own removed at its end
