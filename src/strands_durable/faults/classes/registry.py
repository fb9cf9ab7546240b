"""The registry of fault classes by name, for the soak runner, the CLI, the pytest plugin and the CI gate.

A class is a module declaring a `FaultClass` (faults/kit/findings.py) as `FAULT_CLASS`. The classes this package
ships are one line each in `BUILT_IN` (classes/names.py); another package adds its own through the entry-point group
`strands_durable.fault_classes` (name = the class's name, value = `module:attribute` of its `FaultClass`), and
`strands chaos --faults`, the pytest plugin's `--strands-chaos-faults` and the soak pick it up from there. A
built-in name always means the built-in class.

`explore_fault(fault, target, workdir, level=...)` runs one class over one workflow and returns its `FaultRun`;
`find_faults(fault, spec_path, workdir)` returns just the findings. Levels bound the work: `gate` is what CI runs
on every example (seconds per class), `full` explores every point the class knows.
"""

from __future__ import annotations

import functools
import importlib
import json
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from strands_durable.errors import UsageError
from strands_durable.faults.classes.names import BUILT_IN, FAULT_CLASSES
from strands_durable.faults.kit.findings import FaultClass, FaultRun, Finding
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget, spec_target

AGENT_FAULTS = ("interrupt", "kill")  # the classes the Python-agent engine (faults/agents/) injects
ENTRY_POINT_GROUP = "strands_durable.fault_classes"
LEVELS = ("gate", "full")


@functools.cache
def _added() -> dict[str, EntryPoint]:
    """The classes other packages add through the entry-point group (read once per process)."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in BUILT_IN}


def fault_class_names() -> tuple[str, ...]:
    """Every class: the built-in ones in their order, then those other packages add, by name."""
    return (*FAULT_CLASSES, *sorted(_added()))


def fault_class(name: str) -> FaultClass:
    """The registered class `name` (its module is imported on first use); UsageError names an unknown one, or an
    entry point that does not name a `FaultClass` of that name."""
    module = BUILT_IN.get(name)
    if module is not None:
        return importlib.import_module(module).FAULT_CLASS
    entry = _added().get(name)
    if entry is None:
        raise UsageError(f"unknown fault class {name!r}; choose from {', '.join(fault_class_names())}")
    try:
        declared = entry.load()
    except Exception as exc:  # another package's code: any failure to import it is that package's
        raise UsageError(f"fault class {name!r} ({ENTRY_POINT_GROUP} entry point {entry.value}): {exc}") from None
    if not isinstance(declared, FaultClass) or declared.name != name:
        where = f"the {ENTRY_POINT_GROUP} entry point {entry.value}"
        raise UsageError(f"fault class {name!r}: {where} is not a FaultClass named {name!r}")
    return declared


def parse_fault_classes(text: str | None) -> list[str]:
    """`kill,power` -> ["kill", "power"]; `all` or nothing -> every class; UsageError names an unknown one."""
    names = [part.strip() for part in (text or "all").split(",") if part.strip()]
    known = fault_class_names()
    if names == ["all"]:
        return list(known)
    for name in names:
        if name not in known:
            raise UsageError(f"--faults: unknown fault class {name!r}; choose from {', '.join(known)} or all")
    return names


def agent_faults(names: list[str] | tuple[str, ...]) -> list[str]:
    """The fault classes a Python agent is explored under (`interrupt`, `kill`); UsageError names an unknown class
    or one that does not apply to agents."""
    known = fault_class_names()
    for name in names:
        if name not in known:
            raise UsageError(f"unknown fault class {name!r}; choose from {', '.join(known)}")
        if name not in AGENT_FAULTS:
            taken = ", ".join(AGENT_FAULTS)
            raise UsageError(f"fault class {name!r} does not apply to Python agents; they take {taken}")
    return list(names)


def explore_fault(
    fault: str,
    target: ChaosTarget,
    workdir: Path,
    *,
    level: str = "gate",
    golden: WorkflowGoldenRun | None = None,
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
    fault: str, golden: WorkflowGoldenRun, workdir: Path, seed: int
) -> tuple[list[tuple[str, Any]], list[str]]:
    """For the pytest plugin: run `fault` at gate bounds over the plugin's golden run (whose target may answer from
    a cassette) and return (the item's report properties, the findings' texts)."""
    from strands_durable.faults.kit.report import PROPERTY_PREFIX

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
        "coverage": json.dumps({fault: run.coverage()}, separators=(",", ":")),
        "divergences": summary["divergences"] + summary["data_lost"],
        "invalid_histories": summary["invalid_histories"],
        "problems": json.dumps([str(f) for f in run.findings]),
    }
    return [(PROPERTY_PREFIX + key, value) for key, value in record.items()], [str(f) for f in run.findings]
