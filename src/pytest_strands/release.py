"""A workflow's golden runs are let go once the last of its items has run.

Every item of a spec file holds the workflow's golden run (and an order's item, or the `schedules` item, the golden
runs of the completion orders): the recorded states, records and workspaces crash points derive their states from.
Nothing reads them once the workflow's last item has run, yet pytest keeps every item until the process ends, so
they stayed alive to the end: each later full collection of the garbage collector walked them again, and so did the
interpreter's exit. `GoldenRelease` counts each spec file's items left to run and, when the count reaches zero,
has them let go of their golden runs (`ChaosItem.release`). An item pytest deselects or never runs (`-x`, `-k`)
keeps its file's golden runs; they are freed at the exit as before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Generator
from typing import Any

import pytest

from pytest_strands.items import ChaosItem


class GoldenRelease:
    """Registered under `--strands-chaos`: counts the items left per spec file, releases a file's items after its
    last one has run."""

    def __init__(self) -> None:
        self.left: Counter[Any] = Counter()  # spec file node -> its items not yet run
        self.items: dict[Any, list[ChaosItem]] = {}

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:  # the items that will run, in order; one listed twice runs twice
            if isinstance(item, ChaosItem):
                self.left[item.parent] += 1
                self.items.setdefault(item.parent, []).append(item)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
        try:
            return (yield)
        finally:
            self._ran(item)

    def _ran(self, item: pytest.Item) -> None:
        spec_file = item.parent
        if spec_file not in self.left:
            return
        self.left[spec_file] -= 1
        if self.left[spec_file] > 0:
            return
        del self.left[spec_file]
        for done in self.items.pop(spec_file):
            done.release()
