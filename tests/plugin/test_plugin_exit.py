"""A chaos session's processes (serial, the xdist controller and its workers) freeze their surviving objects at
exit, so the interpreter's teardown does not walk their heap once more; without --strands-chaos nothing changes."""

from __future__ import annotations

import pytest

from tests.plugin.support import add_research_spec

# registered when the conftest is imported, before the plugin's handler: atexit runs it after the plugin's
EXIT_PROBE = """
import atexit
import gc
import os

_where = {"name": "serial"}


def pytest_configure(config):
    _where["name"] = getattr(config, "workerinput", {}).get("workerid", "main")


def _record():
    with open(os.path.join(os.path.dirname(__file__), f"frozen-{_where['name']}.txt"), "w") as out:
        out.write(str(gc.get_freeze_count()))


atexit.register(_record)
"""


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_every_process_of_a_chaos_session_freezes_its_survivors_at_exit(
    pytester: pytest.Pytester, workers: str
) -> None:
    add_research_spec(pytester)
    pytester.makeconftest(EXIT_PROBE)
    options = ["--strands-chaos-max-points=2", "--strands-chaos-schedules=0", "-p", "no:cacheprovider", "-n", workers]
    pytester.runpytest_subprocess("--strands-chaos", *options).assert_outcomes(passed=3)
    processes = ["main"] if workers == "0" else ["main", "gw0", "gw1"]
    for name in processes:
        assert int((pytester.path / f"frozen-{name}.txt").read_text()) > 10_000, name
    pytester.runpytest_subprocess(*options)  # the plugin inert: nothing frozen
    for name in processes:
        assert int((pytester.path / f"frozen-{name}.txt").read_text()) == 0, name


SUMMARY_PROBE = """
import sys

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    config = terminalreporter.config
    name = getattr(config, "workerinput", {}).get("workerid", "controller")
    (config.rootpath / f"{name}-summary.txt").write_text(repr("hypothesis" in sys.modules))
"""


@pytest.mark.slow
def test_xdist_processes_import_hypothesis_for_their_summary_before_their_end(
    pytester: pytest.Pytester,
) -> None:
    """hypothesis' plugin imports hypothesis in every process's terminal summary. The controller has it already,
    imported while it waited for the last worker; each worker too, imported after it sent its collection, though
    no item of this run imports it (no schedules): not after a worker's last item. Without hypothesis' plugin no
    process imports it."""
    add_research_spec(pytester)
    pytester.makeconftest(SUMMARY_PROBE)
    options = ["--strands-chaos-max-points=2", "--strands-chaos-schedules=0", "-p", "no:cacheprovider", "-n", "2"]
    processes = ("controller", "gw0", "gw1")
    pytester.runpytest_subprocess("--strands-chaos", *options).assert_outcomes(passed=3)
    assert [(pytester.path / f"{name}-summary.txt").read_text() for name in processes] == ["True"] * 3
    pytester.runpytest_subprocess("--strands-chaos", *options, "-p", "no:hypothesispytest").assert_outcomes(passed=3)
    assert [(pytester.path / f"{name}-summary.txt").read_text() for name in processes] == ["False"] * 3


UNCONFIGURE_PROBE = """
import sys

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_unconfigure(config):
    before = set(sys.modules)
    yield
    if not hasattr(config, "workerinput"):
        imported = sorted(set(sys.modules) - before)
        (config.rootpath / "controller-end-imports.txt").write_text(repr(imported))
"""


@pytest.mark.slow
def test_the_xdist_controller_imports_nothing_of_ours_at_its_very_end(pytester: pytest.Pytester) -> None:
    """Removing the suite's scratch directory imports the store's file operations (the whole store package): the
    controller imports them while it waits for the last worker, not in its unconfigure, after every worker ended."""
    add_research_spec(pytester)
    pytester.makeconftest(UNCONFIGURE_PROBE)
    options = ["--strands-chaos-max-points=2", "--strands-chaos-schedules=0", "-p", "no:cacheprovider", "-n", "2"]
    pytester.runpytest_subprocess("--strands-chaos", *options).assert_outcomes(passed=3)
    imported = eval((pytester.path / "controller-end-imports.txt").read_text())
    assert [m for m in imported if m.startswith(("strands_durable", "hypothesis"))] == []


THREAD_PROBE = """
import sys
import threading

_where = {}


class _Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "strands_durable.store.fileops" and _where.get("controller"):
            (_where["root"] / "controller-import-thread.txt").write_text(threading.current_thread().name)
        return None


sys.meta_path.insert(0, _Watch())


def pytest_configure(config):
    _where.update(controller=not hasattr(config, "workerinput"), root=config.rootpath)
"""


@pytest.mark.slow
def test_the_xdist_controller_does_its_end_imports_off_the_thread_that_answers_the_workers(
    pytester: pytest.Pytester,
) -> None:
    """The worker still running keeps one item in hand and runs its last only once the controller's loop has told
    it there is no next: the controller's end imports (~0.1 s) must not hold that loop."""
    add_research_spec(pytester)
    pytester.makeconftest(THREAD_PROBE)
    options = ["--strands-chaos-max-points=2", "--strands-chaos-schedules=0", "-p", "no:cacheprovider", "-n", "2"]
    pytester.runpytest_subprocess("--strands-chaos", *options).assert_outcomes(passed=3)
    assert (pytester.path / "controller-import-thread.txt").read_text() == "strands-chaos-end-imports"
