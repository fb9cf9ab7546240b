"""The real-fault classes are a registry: each module declares its FaultClass (name, bounds, explorer), and a new
class is one module plus one line in `faults/real.py`'s CLASSES."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from strands_durable.errors import UsageError
from strands_durable.faults import real
from strands_durable.faults.common import FaultRun
from strands_durable.faults.target import ChaosTarget
from tests.conftest import EXAMPLES


def test_every_registered_class_declares_itself_under_its_name() -> None:
    assert real.FAULT_CLASSES == ("interrupt", "kill", "power", "disk", "concurrent", "stream", "compound")
    for name in real.FAULT_CLASSES:
        declared = real.fault_class(name)
        assert declared.name == name
        assert set(declared.bounds) == set(real.LEVELS)


def test_a_new_class_is_one_module_and_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "toy_fault.py").write_text(
        "from strands_durable.faults.common import FaultClass, FaultRun\n"
        "def explore_toy(target, workdir, *, golden, depth):\n"
        "    run = FaultRun('toy', target.name)\n"
        "    run.explored = depth\n"
        "    run.outcomes[golden] += 1\n"
        "    return run\n"
        "FAULT_CLASS = FaultClass('toy', {'gate': {'depth': 2}, 'full': {'depth': 9}}, explore_toy)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(real.CLASSES, "toy", "toy_fault")  # the one line
    target = ChaosTarget(EXAMPLES / "chain-research.strands.yaml")
    run = real.explore_fault("toy", target, tmp_path, level="full", golden="the golden run")  # type: ignore[arg-type]
    assert isinstance(run, FaultRun) and run.explored == 9 and run.outcomes["the golden run"] == 1
    sys.modules.pop("toy_fault", None)


def test_an_unknown_class_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown fault class 'lightning'"):
        real.fault_class("lightning")
