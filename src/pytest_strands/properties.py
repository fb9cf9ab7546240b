"""How a chaos item's properties travel from a pytest-xdist worker: one user property each, or packed into one.

Every chaos item records its counts as `strands_chaos_*` user properties (faults/suite.py). In a serial run, and
whenever JUnit XML is written (one `<property>` element each), they stay as they are. On an xdist worker without
`--junitxml` only the controller's chaos totals read them, yet pytest copies them onto the item's call and teardown
reports and xdist serialises every report element by element in Python, on the worker and again on the controller
(~70 of the ~230 elements each item sends; docs/benchmarks.md). There `PackedProperties` packs them, after the
item's test ran, into one property holding their records as JSON, and the controller's totals `unpack` them: the
same records, the same summary line and JSON report.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from strands_durable.faults.kit.report import PROPERTY_PREFIX, records_of

PACKED = PROPERTY_PREFIX + "packed"  # its value: a JSON list of the item's records, each as `records_of` gives it


def packs_properties(config: pytest.Config) -> bool:
    """True on an xdist worker whose controller writes no JUnit XML (the only reader of the properties one by
    one)."""
    return hasattr(config, "workerinput") and not getattr(config.option, "xmlpath", None)


def pack(user_properties: list[tuple[str, Any]]) -> None:
    """Replace the chaos properties in `user_properties` (in place) with one `PACKED` property after the others."""
    ours = [(name, value) for name, value in user_properties if name.startswith(PROPERTY_PREFIX)]
    if not ours:
        return
    user_properties[:] = [(name, value) for name, value in user_properties if not name.startswith(PROPERTY_PREFIX)]
    user_properties.append((PACKED, json.dumps(records_of(ours), separators=(",", ":"))))


def unpack(user_properties: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The properties with each `PACKED` one expanded back into one property per recorded value."""
    if not any(name == PACKED for name, _ in user_properties):
        return user_properties
    expanded: list[tuple[str, Any]] = []
    for name, value in user_properties:
        if name != PACKED:
            expanded.append((name, value))
            continue
        for record in json.loads(value):
            expanded += [(PROPERTY_PREFIX + key, item) for key, item in record.items()]
    return expanded


class PackedProperties:
    """Registered on xdist workers when `packs_properties`: packs each item's chaos properties once its test has
    run (before pytest makes the call report), whether the test passed or failed."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        try:
            return (yield)
        finally:
            pack(item.user_properties)
