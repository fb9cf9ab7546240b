"""The chaos soak: every real-fault class over every spec until a time budget is spent; a JSON report and a
readable summary (crash points per fault class, unique crash states, divergences, invalid histories, data lost;
zero is the bar), with a progress display on stderr.

Work comes in rounds: round 0 runs the `gate` bounds of every class on every spec, round 1 the `full` bounds,
and later rounds keep killing children at random moments (a new seed each round) and racing resumers. The budget
is checked between work items, so the last item may run past it.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.faults.common import FaultRun, FaultTarget, Golden, reset_dir, run_golden, write_scratch
from strands_durable.faults.real import FAULT_CLASSES, explore_fault
from strands_durable.store.fileops import FileOps
from strands_durable.wording import counted

COLUMNS = ("crash_points", "unique_states", "divergences", "invalid_histories", "data_lost")


@dataclass
class SoakResult:
    specs: list[str]
    faults: list[str]
    seed: int
    budget_s: float
    elapsed_s: float = 0.0
    rounds: int = 0
    runs: list[FaultRun] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # a workflow whose golden run failed, for example

    def totals(self) -> dict[str, dict[str, int]]:
        out = {fault: dict.fromkeys(COLUMNS, 0) for fault in self.faults}
        for run in self.runs:
            summary = run.summary()
            row = out.setdefault(run.fault, dict.fromkeys(COLUMNS, 0))
            for column in COLUMNS:
                row[column] += int(summary[column])
        return out

    @property
    def findings(self) -> list[str]:
        return [str(f) for run in self.runs for f in run.findings] + self.errors

    @property
    def passed(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        return {
            "specs": self.specs,
            "faults": self.faults,
            "seed": self.seed,
            "budget_s": self.budget_s,
            "elapsed_s": round(self.elapsed_s, 1),
            "rounds": self.rounds,
            "totals": self.totals(),
            "passed": self.passed,
            "errors": self.errors,
            "runs": [run.summary() for run in self.runs],
        }

    def summary_lines(self) -> list[str]:
        totals = self.totals()
        header = f"{'fault':<12}" + "".join(f"{c.replace('_', ' '):>19}" for c in COLUMNS)
        lines = [
            f"strands chaos: {counted(len(self.specs), 'workflow')}, "
            f"{counted(len(self.faults), 'fault class', 'fault classes')}, {counted(self.rounds, 'round')} "
            f"in {self.elapsed_s:.0f}s of a {self.budget_s:.0f}s budget, seed {self.seed}",
            header,
        ]
        grand = dict.fromkeys(COLUMNS, 0)
        for fault, row in totals.items():
            lines.append(f"{fault:<12}" + "".join(f"{row[c]:>19}" for c in COLUMNS))
            for column in COLUMNS:
                grand[column] += row[column]
        lines.append(f"{'total':<12}" + "".join(f"{grand[c]:>19}" for c in COLUMNS))
        findings = self.findings
        if findings:
            lines.append(f"FAIL: {counted(len(findings), 'finding')}; zero is the bar. First ones:")
            lines += [f"  {text}" for text in findings[:10]]
        else:
            lines.append("PASS: no divergence, no invalid history, no data lost")
        return lines


def _work(specs: list[Path], faults: list[str]) -> Iterator[tuple[int, Path, str, str, dict[str, Any]]]:
    """(round, spec, fault, level, explorer overrides), for ever: the caller stops when the budget is spent."""
    for spec in specs:
        for fault in faults:
            yield 0, spec, fault, "gate", {}
    for spec in specs:
        for fault in faults:
            yield 1, spec, fault, "full", {}
    round_number = 2
    while True:
        for spec in specs:
            if "kill" in faults:
                yield round_number, spec, "kill", "gate", {"max_points": 0, "random_moments": 8}
            if "concurrent" in faults:
                yield round_number, spec, "concurrent", "gate", {}
        if not {"kill", "concurrent"} & set(faults):
            return
        round_number += 1


def soak(
    specs: list[Path],
    *,
    faults: list[str] | None = None,
    budget_s: float = 600.0,
    seed: int = 0,
    workdir: Path | None = None,
    progress: bool = True,
    max_rounds: int | None = None,
) -> SoakResult:
    """Run the fault classes over the specs until `budget_s` seconds are spent (or `max_rounds` rounds ran)."""
    faults = list(faults or FAULT_CLASSES)
    logging.getLogger("strands").setLevel(logging.CRITICAL)  # injected failures are expected; findings report them
    result = SoakResult([str(s) for s in specs], faults, seed, budget_s)
    root = workdir or Path(tempfile.mkdtemp(prefix="strands-chaos-"))
    goldens: dict[Path, Golden | None] = {}
    started = time.monotonic()
    display = _Display(budget_s, enabled=progress)
    with display:
        for round_number, spec, fault, level, overrides in _work(specs, faults):
            elapsed = time.monotonic() - started
            if elapsed >= budget_s or (max_rounds is not None and round_number >= max_rounds):
                break
            display.update(elapsed, f"round {round_number}: {fault} ({level}) on {spec.name}")
            target = FaultTarget(spec, seed=seed)
            workspace = root / target.name / f"{fault}-{round_number}"
            if spec not in goldens:
                goldens[spec] = _golden(target, root / target.name / "golden", result)
            golden = goldens[spec]
            if golden is None:
                continue
            run = FaultRun(fault, target.name)
            try:
                explore_fault(
                    fault, target, workspace, level=level, golden=golden, seed=seed + round_number, run=run, **overrides
                )
            except Exception as exc:  # a harness or setup failure is reported, and the soak goes on
                run.add("harness", level, "harness-error", f"{type(exc).__name__}: {exc}")
            result.runs.append(run)
            result.rounds = max(result.rounds, round_number + 1)
            reset_dir(workspace)
        result.elapsed_s = time.monotonic() - started
        display.update(result.elapsed_s, "done")
    if workdir is None:
        FileOps().remove_tree(root)
    return result


def _golden(target: FaultTarget, workdir: Path, result: SoakResult) -> Golden | None:
    try:
        return run_golden(target, workdir)
    except Exception as exc:  # the workflow cannot run at all: nothing to break, report it
        result.errors.append(f"{target.spec_path}: the golden run failed: {type(exc).__name__}: {exc}")
        return None


def write_report(result: SoakResult, path: Path) -> None:
    write_scratch(path, (json.dumps(result.to_json(), indent=2) + "\n").encode())


class _Display:
    """A rich progress bar over the time budget on stderr (nothing when disabled or not a terminal-capable run)."""

    def __init__(self, budget_s: float, *, enabled: bool) -> None:
        self.enabled = enabled
        self.budget_s = budget_s
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> _Display:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("[bold]chaos[/bold] {task.description}"),
                BarColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=False,
                auto_refresh=False,  # no refresh thread: the kill and concurrent classes fork, which needs one thread
            )
            self._progress.__enter__()
            self._task = self._progress.add_task("starting", total=self.budget_s)
        return self

    def update(self, elapsed: float, description: str) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=min(elapsed, self.budget_s), description=description)
            self._progress.refresh()

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)
