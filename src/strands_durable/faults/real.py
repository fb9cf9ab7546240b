"""The real-fault classes behind one small API, for the soak runner, the CLI, the pytest plugin and the CI gate.

`explore_fault(fault, target, workdir, level=...)` runs one class over one workflow and returns its `FaultRun`;
`find_faults(fault, spec_path, workdir)` returns just the findings. Levels bound the work: `gate` is what CI runs
on every example (seconds per class), `full` explores every point the class knows.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from strands_durable.errors import UsageError
from strands_durable.faults.common import FaultRun, FaultTarget, Finding, Golden, run_golden

FAULT_CLASSES = ("kill", "power", "disk", "concurrent", "stream", "compound")
LEVELS = ("gate", "full")

# fault -> level -> keyword arguments of its explorer
BOUNDS: dict[str, dict[str, dict[str, Any]]] = {
    "kill": {
        "gate": {"max_points": 30, "graceful_every": 6, "random_moments": 3},
        "full": {"graceful_every": 1, "random_moments": 12},
    },
    "power": {"gate": {"max_points": 200}, "full": {"max_points": 5000}},
    "disk": {"gate": {"stride": 3, "every_errno": False}, "full": {"stride": 1, "every_errno": True}},
    "concurrent": {"gate": {"rounds": 1, "resumers": 3}, "full": {"rounds": 3, "resumers": 4}},
    "stream": {"gate": {"max_calls": 2}, "full": {}},
    "compound": {
        "gate": {"first_points": 2, "resume_points": (3, 15), "repair_stride": 4},
        "full": {"first_points": 6, "resume_points": (1, 5, 20, 60), "repair_stride": 1},
    },
}


def parse_fault_classes(text: str | None) -> list[str]:
    """`kill,power` -> ["kill", "power"]; `all` or nothing -> every class; UsageError names an unknown one."""
    names = [part.strip() for part in (text or "all").split(",") if part.strip()]
    if names == ["all"]:
        return list(FAULT_CLASSES)
    for name in names:
        if name not in FAULT_CLASSES:
            raise UsageError(f"--faults: unknown fault class {name!r}; choose from {', '.join(FAULT_CLASSES)} or all")
    return names


def _explorer(fault: str) -> Callable[..., FaultRun]:
    if fault == "kill":
        from strands_durable.faults.kill import explore_kill as explorer
    elif fault == "power":
        from strands_durable.faults.power import explore_power as explorer
    elif fault == "disk":
        from strands_durable.faults.disk import explore_disk as explorer
    elif fault == "concurrent":
        from strands_durable.faults.concurrent import explore_concurrent as explorer
    elif fault == "stream":
        from strands_durable.faults.stream import explore_stream as explorer
    elif fault == "compound":
        from strands_durable.faults.compound import explore_compound as explorer
    else:
        raise UsageError(f"unknown fault class {fault!r}; choose from {', '.join(FAULT_CLASSES)}")
    return explorer


def explore_fault(
    fault: str,
    target: FaultTarget,
    workdir: Path,
    *,
    level: str = "gate",
    golden: Golden | None = None,
    seed: int = 0,
    **overrides: Any,
) -> FaultRun:
    """Run one fault class over one workflow at `level` (explorer keyword arguments may override the bounds)."""
    if level not in LEVELS:
        raise UsageError(f"unknown level {level!r}; choose from {', '.join(LEVELS)}")
    kwargs = {**BOUNDS[fault][level], **overrides}
    if fault == "kill":
        kwargs.setdefault("seed", seed)
    if fault != "power":  # power records its own golden run through the recording file operations
        kwargs["golden"] = golden or run_golden(target, workdir / "golden")
    return _explorer(fault)(target, workdir, **kwargs)


def find_faults(
    fault: str, spec_path: Path | str, workdir: Path, *, level: str = "gate", seed: int = 0, **overrides: Any
) -> list[Finding]:
    """The findings of one fault class over one spec (empty: the store survived every fault)."""
    target = FaultTarget(Path(spec_path), seed=seed)
    return explore_fault(fault, target, workdir, level=level, seed=seed, **overrides).findings


def explore_plugin_fault(fault: str, golden: Any, workdir: Path, seed: int) -> tuple[list[tuple[str, Any]], list[str]]:
    """For the pytest plugin: run `fault` at gate bounds over the plugin's golden run (`faults.explore.GoldenRun`,
    whose target may answer from a cassette) and return (the item's report properties, the findings' texts)."""
    from strands_durable.faults.report import PROPERTY_PREFIX

    chaos_target = golden.target
    factory = None
    if chaos_target.model is not None:
        model = chaos_target.model

        def factory(*, agent_id: str, provider: str, model_id: Any, runtime: Any) -> Any:
            return model(agent_id=agent_id, model_id=model_id, runtime=runtime)

    target = FaultTarget(chaos_target.spec_path, dict(chaos_target.variables), chaos_target.seed, factory)
    run = explore_fault(fault, target, workdir / "real-faults" / target.name / fault, level="gate", seed=seed)
    summary = run.summary()
    record = {
        "workflow": Path(chaos_target.spec_path).name,
        "point": f"fault:{fault}",
        "fault": fault,
        "explored": run.explored,
        "unique_states": run.unique_states,
        "divergences": summary["divergences"] + summary["data_lost"],
        "invalid_histories": summary["invalid_histories"],
        "problems": json.dumps([str(f) for f in run.findings]),
    }
    return [(PROPERTY_PREFIX + key, value) for key, value in record.items()], [str(f) for f in run.findings]
