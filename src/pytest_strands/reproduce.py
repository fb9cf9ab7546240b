"""The `reproduce: <command>` line of a failing chaos item: one pytest command, to run from the directory the
session was started in, that runs that item alone with every option that decides its outcome (the seed, the fault
class, the completion-order policy, the mode, the bounds). The item's id names the crash point (and its order,
when it has one); the path before it is the spec file, or the test module holding the factory or the test.

The line is appended to the item's failure text and recorded as the item's `reproduce` property, so the JSON report
carries the same line.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

import pytest

from pytest_strands.keys import SUITE, ChaosFailure
from strands_durable.faults.kit.report import PROPERTY_PREFIX

REPRODUCE = PROPERTY_PREFIX + "reproduce"


def reproduce_command(item: pytest.Item) -> str:
    """The command that runs `item` again as it just ran."""
    settings = item.config.stash[SUITE].settings
    args = ["pytest", "--strands-chaos", f"--strands-chaos-seed={settings.seed}"]
    faults = _faults(item, settings.faults)
    if faults != ["interrupt"]:
        args.append(f"--strands-chaos-faults={','.join(faults)}")
    if settings.orders != "default":
        args.append(f"--strands-chaos-orders={settings.orders}")
    if settings.orders_bound != 3:
        args.append(f"--strands-chaos-orders-bound={settings.orders_bound}")
    if settings.full:
        args.append("--strands-chaos-full")
    if settings.max_points is not None:
        args.append(f"--strands-chaos-max-points={settings.max_points}")
    if getattr(item, "runs_schedules", False):
        args.append(f"--strands-chaos-schedules={settings.schedules}")
    args += ["-p", "no:randomly", _node_argument(item)]  # pytest-randomly would reseed `random` per test
    return shlex.join(args)


def _faults(item: pytest.Item, session_faults: list[str]) -> list[str]:
    """The fault classes the item needs to be collected and run: its own class when it has one (a real-fault
    item, an agent point under `kill`), else the session's (a fixture test runs them all)."""
    own = getattr(item, "fault", None)
    return [own] if isinstance(own, str) else list(session_faults)


def _node_argument(item: pytest.Item) -> str:
    """The item's node id with its file named relative to the directory pytest was started in."""
    where = os.path.relpath(item.path, item.config.invocation_params.dir)
    _, _, names = item.nodeid.partition("::")
    return f"{where}::{names}" if names else where


def reproduce_line(item: pytest.Item) -> str:
    return f"reproduce: {reproduce_command(item)}"


class ReproduceLines:
    """Registered under --strands-chaos in every process that runs items: an item (a chaos item, or a test using
    the `strands_chaos` fixture) that fails with a `ChaosFailure` records its reproduce line as a property, before
    the properties are packed for pytest-xdist (this wrapper is innermost, so its handler runs first)."""

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        try:
            return (yield)
        except ChaosFailure:
            item.user_properties.append((REPRODUCE, reproduce_command(item)))
            raise
