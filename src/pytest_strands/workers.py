"""`--strands-chaos-workers=N|auto`: the crash-point and schedules items run in workers forked from this process
after collection, when strands, the kit and what the dealt items' work imports (hypothesis) are imported and
every golden run is computed (faults/kit/workers.py).

Items still run in pytest's order here, one after the other: each takes its properties and failure text from the
worker that ran it (the workers take items in the order dealt, the long schedules items first), so `-k`, `-x`,
`--lf`, the JUnit XML and the HTML report see what a serial run sees. An item that fails, or whose worker raised
or died, is run again here, so that what pytest shows for a failure (its text and its captured output) is the
serial run's. Linux only; with pytest-xdist only under `-n 0` (an xdist worker runs its items serially).
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from pytest_strands.items import DEALER, SUITE, DealtItem, ItemResult, ScheduleItem
from pytest_strands.keys import SELECTION
from strands_durable.faults.suite import ChaosUsageError

WORKERS = pytest.StashKey[int]()  # the number of forked workers asked for (0: none)
FLAG = "--strands-chaos-workers"
GOLDENS_WITHIN_S = 3600.0  # a child computing golden runs is waited for this long, then killed (they run here)


def parse_workers(value: str | None, *, platform: str, numprocesses: Any) -> int:
    """The number of forked workers `value` asks for (None, "" and "0": none; "auto": the cores this process may
    use); `ChaosUsageError` for a bad value, a platform without fork, or pytest-xdist's `-n` other than 0."""
    text = (value or "").strip()
    if text in ("", "0"):
        return 0  # before any import: an xdist controller imports none of the runs' machinery
    from strands_durable.faults.kit.workers import cores, fork_problem

    if text == "auto":
        count = cores()
    else:
        try:
            count = int(text)
        except ValueError:
            raise ChaosUsageError(f"{FLAG}: {text!r} is not a number of workers or 'auto'") from None
        if count < 0:
            raise ChaosUsageError(f"{FLAG}: {count} is not a number of workers (0 or more, or 'auto')")
    problem = fork_problem(platform)
    if problem is not None:
        raise ChaosUsageError(f"{FLAG}: {problem}")
    if numprocesses not in (None, 0, "0"):
        raise ChaosUsageError(
            f"{FLAG}: cannot run under pytest-xdist's -n {numprocesses} (each xdist worker runs its items "
            "serially); pass -n 0 with it"
        )
    return count


class ItemDealer:
    """The session's forked workers and the items dealt to them."""

    def __init__(self, items: list[DealtItem], count: int) -> None:
        from strands_durable.faults.kit.workers import ForkedWorkers

        self.items = items
        self.index = {item.nodeid: number for number, item in enumerate(items)}
        self.suite = items[0].config.stash[SUITE]
        self.workers = ForkedWorkers(self._run, count=count, setup=self._setup)

    def start(self) -> None:
        for name in sorted({name for item in self.items for name in item.work_imports}):
            importlib.import_module(name)  # once here, inherited by every worker
        self._run_samples()
        long_first = sorted(range(len(self.items)), key=lambda n: not isinstance(self.items[n], ScheduleItem))
        self.workers.start(long_first)

    def _run_samples(self) -> None:
        """Every dealt workflow's exactness sample, run here once (faults/classes/explore.py `run_sample`): each
        worker inherits its verdicts instead of running every workflow's sample again. A sample that raises is
        left to the items that need it, which report it as a serial run does."""
        from strands_durable.faults.classes.explore import run_sample

        goldens = {id(run): run for item in self.items for run in (item.golden, *getattr(item, "orders", []))}
        for golden in goldens.values():
            try:
                run_sample(golden, self.suite.scratch(golden, "sample"))
            except Exception:  # the item that derives a state runs it again, and fails there
                continue

    def _setup(self, worker: int) -> None:
        self.suite.scratch_tag = f"-w{worker}"

    def _run(self, number: int) -> ItemResult:
        return self.items[number].work()

    def result(self, item: DealtItem) -> ItemResult:
        """The item's result from its worker; run here when it failed there, or its worker raised or died."""
        from strands_durable.faults.kit.workers import TaskLost

        number = self.index.get(item.nodeid)
        if number is None:
            return item.work()
        try:
            properties, failure = self.workers.result(number)
        except TaskLost:
            return item.work()
        return (properties, None) if failure is None else item.work()

    def close(self) -> None:
        self.workers.close()


def prepare_goldens_forked(session: pytest.Session) -> None:
    """Before collection, with N forked workers asked for: the spec files' golden runs computed N at a time, each
    of N-1 children forked here (after the imports) computing every N-th file and leaving its runs in the session's
    shared directory (faults/golden_file.py), this process its own share, so that collection reads the children's
    runs instead of computing them one after another. A child that cannot be forked, or fails, costs nothing but
    time: collection computes what it finds no file for."""
    config = session.config
    suite, count = config.stash[SUITE], config.stash.get(WORKERS, 0)
    if count < 2:
        return  # before any import: an xdist controller imports none of the runs' machinery
    from pytest_strands.collect import spec_files
    from strands_durable.faults.kit import runs  # noqa: F401  (imported once, here: every child inherits it)
    from strands_durable.faults.kit.forking import fork_child, wait_child

    files = spec_files(config, config.stash[SELECTION])
    count = min(count, len(files))
    if count < 2 or suite.settings.record:
        return
    suite.shared = suite.workdir / "goldens"
    children = []
    for number in range(1, count):
        share = files[number::count]
        try:
            children.append(fork_child(lambda share=share, n=number: _prepare_in_child(suite, share, n)))
        except RuntimeError:  # other threads alive: computed here instead
            break
    suite.prepare_goldens(files[0::count])
    for pid in children:
        wait_child(pid, timeout=GOLDENS_WITHIN_S)


def _prepare_in_child(suite: Any, files: list[Any], number: int) -> int:
    suite.scratch_tag = f"-g{number}"
    suite.prepare_goldens(files)
    return 0


def start_dealer(session: pytest.Session) -> ItemDealer | None:
    """Fork the workers for the session's dealt items, or None (no workers asked for, nothing to deal, or the
    fork was refused: then the items run here, and a line says why)."""
    config = session.config
    count = config.stash.get(WORKERS, 0)
    if not count or config.option.collectonly or SUITE not in config.stash:
        return None
    if session.testsfailed and not config.option.continue_on_collection_errors:
        return None
    items = [item for item in session.items if isinstance(item, DealtItem)]
    if not items:
        return None
    dealer = ItemDealer(items, count)
    try:
        dealer.start()
    except RuntimeError as exc:  # other threads alive: forking now would copy their locks
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"strands-chaos: running serially, workers not forked: {exc}", yellow=True)
        return None
    config.stash[DEALER] = dealer
    return dealer


def stop_dealer(session: pytest.Session, dealer: ItemDealer | None) -> None:
    if dealer is not None:
        del session.config.stash[DEALER]
        dealer.close()
