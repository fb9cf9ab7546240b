"""The registry of fault classes behind one small API, for the soak runner, the CLI, the pytest plugin and the CI
gate.

`explore_fault(fault, target, workdir, level=...)` runs one class over one workflow and returns its `FaultRun`;
`find_faults(fault, spec_path, workdir)` returns just the findings. Levels bound the work: `gate` is what CI runs
on every example (seconds per class), `full` explores every point the class knows.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from strands_durable.errors import UsageError
from strands_durable.faults.common import FaultClass, FaultRun, Finding
from strands_durable.faults.golden import GoldenRun, run_golden
from strands_durable.faults.target import ChaosTarget, spec_target

# the fault classes: one line each (name -> the module declaring its `FaultClass` as FAULT_CLASS)
CLASSES: dict[str, str] = {
    "interrupt": "strands_durable.faults.interrupt",
    "kill": "strands_durable.faults.kill",
    "power": "strands_durable.faults.power",
    "disk": "strands_durable.faults.disk",
    "concurrent": "strands_durable.faults.concurrent",
    "stream": "strands_durable.faults.stream",
    "compound": "strands_durable.faults.compound",
}
FAULT_CLASSES = tuple(CLASSES)
LEVELS = ("gate", "full")


def fault_class(name: str) -> FaultClass:
    """The registered class `name` (its module is imported on first use); UsageError names an unknown one."""
    module = CLASSES.get(name)
    if module is None:
        raise UsageError(f"unknown fault class {name!r}; choose from {', '.join(FAULT_CLASSES)}")
    return importlib.import_module(module).FAULT_CLASS


def parse_fault_classes(text: str | None) -> list[str]:
    """`kill,power` -> ["kill", "power"]; `all` or nothing -> every class; UsageError names an unknown one."""
    names = [part.strip() for part in (text or "all").split(",") if part.strip()]
    if names == ["all"]:
        return list(FAULT_CLASSES)
    for name in names:
        if name not in FAULT_CLASSES:
            raise UsageError(f"--faults: unknown fault class {name!r}; choose from {', '.join(FAULT_CLASSES)} or all")
    return names


def explore_fault(
    fault: str,
    target: ChaosTarget,
    workdir: Path,
    *,
    level: str = "gate",
    golden: GoldenRun | None = None,
    seed: int = 0,
    **overrides: Any,
) -> FaultRun:
    """Run one fault class over one workflow at `level` (explorer keyword arguments may override the bounds)."""
    if level not in LEVELS:
        raise UsageError(f"unknown level {level!r}; choose from {', '.join(LEVELS)}")
    chosen = fault_class(fault)
    kwargs = {**chosen.bounds[level], **overrides}
    if chosen.seeded:
        kwargs.setdefault("seed", seed)
    if not chosen.records_own_golden:
        kwargs["golden"] = golden or run_golden(target, workdir / "golden")
    return chosen.explore(target, workdir, **kwargs)


def find_faults(
    fault: str, spec_path: Path | str, workdir: Path, *, level: str = "gate", seed: int = 0, **overrides: Any
) -> list[Finding]:
    """The findings of one fault class over one spec (empty: the store survived every fault); a spec with network
    tools and no cassette raises `NotExplorable`."""
    target = spec_target(Path(spec_path), seed=seed)
    return explore_fault(fault, target, workdir, level=level, seed=seed, **overrides).findings


def explore_plugin_fault(
    fault: str, golden: GoldenRun, workdir: Path, seed: int
) -> tuple[list[tuple[str, Any]], list[str]]:
    """For the pytest plugin: run `fault` at gate bounds over the plugin's golden run (whose target may answer from
    a cassette) and return (the item's report properties, the findings' texts)."""
    from strands_durable.faults.report import PROPERTY_PREFIX

    target = golden.target
    run = explore_fault(
        fault, target, workdir / "real-faults" / target.name / fault, level="gate", seed=seed, golden=golden
    )
    summary = run.summary()
    record = {
        "workflow": Path(target.spec_path).name,
        "point": f"fault:{fault}",
        "fault": fault,
        "explored": run.explored,
        "unique_states": run.unique_states,
        "divergences": summary["divergences"] + summary["data_lost"],
        "invalid_histories": summary["invalid_histories"],
        "problems": json.dumps([str(f) for f in run.findings]),
    }
    return [(PROPERTY_PREFIX + key, value) for key, value in record.items()], [str(f) for f in run.findings]
