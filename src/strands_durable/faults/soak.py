"""The chaos soak: every real-fault class over every spec until a time budget is spent; a JSON report and a
readable summary (crash points per fault class, unique crash states, divergences, invalid histories, data lost;
zero is the bar), with a progress display on stderr. The verdict (`SoakResult.verdict`) is PASS only when every
(fault class, spec) pair ran and nothing was found; FAIL when something was found; INCOMPLETE otherwise (a pair did
not run: the budget ran out, Ctrl+C, a spec not explorable), naming the pairs that did not run.

Work comes in rounds: round 0 runs the `gate` bounds of every class on every spec, round 1 the `full` bounds,
and later rounds keep killing children at random moments (a new seed each round) and racing resumers. Each work
item runs in a forked child (its own process group): one still running when the budget ends is killed with its
children, so the soak ends within the budget plus a few seconds; what that item found is lost and said so. A
pair ran when one of its work items came back having explored at least one crash point; a class that ran on no
spec is shown as not run. Ctrl+C ends the soak the same way (`interrupted`, never passed); the scratch directory
is removed on every path.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import pickle
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_durable.faults.classes.registry import explore_fault, fault_class_names
from strands_durable.faults.kit.findings import FaultRun
from strands_durable.faults.kit.forking import fork_child, wait_child
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.scratch import reset_dir, write_scratch
from strands_durable.faults.kit.target import NotExplorable, spec_target
from strands_durable.faults.suite import default_workdir
from strands_durable.store.fileops import FileOps
from strands_durable.wording import counted

COLUMNS = ("crash_points", "unique_states", "divergences", "invalid_histories", "data_lost")
PASS, FAIL, INCOMPLETE = "PASS", "FAIL", "INCOMPLETE"


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
    not_explorable: list[str] = field(default_factory=list)  # network tools and no cassette: why, and how to record
    cut_short: list[str] = field(default_factory=list)  # work items the end of the budget (or Ctrl+C) killed
    interrupted: bool = False  # Ctrl+C ended the soak
    out_of_budget: bool = False  # the budget ended the soak (or cut a work item short)
    explored: dict[tuple[str, str], int] = field(default_factory=dict)  # (fault, spec) -> crash points it explored

    def pairs(self) -> list[tuple[str, str]]:
        """Every (fault class, spec) pair the soak has to run, in the order of its first round."""
        return [(fault, spec) for spec in self.specs for fault in self.faults]

    def missing_pairs(self) -> list[tuple[str, str]]:
        """The (fault class, spec) pairs that explored no crash point (never reported as passed)."""
        return [pair for pair in self.pairs() if not self.explored.get(pair)]

    def not_run(self) -> list[str]:
        """The fault classes that explored no crash point on any spec."""
        return [fault for fault, row in self.totals().items() if row["crash_points"] == 0]

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
    def verdict(self) -> str:
        """FAIL when anything was found; else PASS only when every pair ran and the soak was not interrupted;
        else INCOMPLETE."""
        if self.findings:
            return FAIL
        if self.missing_pairs() or self.interrupted:
            return INCOMPLETE
        return PASS

    @property
    def passed(self) -> bool:
        return self.verdict == PASS

    def to_json(self) -> dict[str, Any]:
        return {
            "specs": self.specs,
            "faults": self.faults,
            "seed": self.seed,
            "budget_s": self.budget_s,
            "elapsed_s": round(self.elapsed_s, 1),
            "rounds": self.rounds,
            "totals": self.totals(),
            "verdict": self.verdict,
            "passed": self.passed,
            "missing_pairs": [{"fault": fault, "spec": spec} for fault, spec in self.missing_pairs()],
            "not_run": self.not_run(),
            "interrupted": self.interrupted,
            "out_of_budget": self.out_of_budget,
            "cut_short": self.cut_short,
            "errors": self.errors,
            "not_explorable": self.not_explorable,
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
        not_run = self.not_run()
        for fault, row in totals.items():
            if fault in not_run:
                lines.append(f"{fault:<12}{'not run':>19}")
                continue
            lines.append(f"{fault:<12}" + "".join(f"{row[c]:>19}" for c in COLUMNS))
            for column in COLUMNS:
                grand[column] += row[column]
        lines.append(f"{'total':<12}" + "".join(f"{grand[c]:>19}" for c in COLUMNS))
        if self.interrupted:
            lines.append("Interrupted (Ctrl+C): the table shows what ran before it")
        if self.cut_short:
            lines.append(f"Cut short at the end of the budget: {', '.join(self.cut_short)} (not counted)")
        lines += [f"Not explorable: {reason}" for reason in self.not_explorable]
        findings = self.findings
        missing = self.missing_pairs()
        if missing:
            lines.append(f"Did not run: {_pairs_text(missing, self.specs)}")
        verdict = self.verdict
        if verdict == FAIL:
            lines.append(f"FAIL: {counted(len(findings), 'finding')}; zero is the bar. First ones:")
            lines += [f"  {text}" for text in findings[:10]]
        elif verdict == INCOMPLETE:
            why = "interrupted (Ctrl+C)" if self.interrupted else ""
            if missing:
                pairs = counted(len(missing), "(fault class, spec) pair", "(fault class, spec) pairs")
                why += ("; " if why else "") + f"{pairs} of {len(self.pairs())} did not run"
                if self.out_of_budget:
                    why += ": the budget ran out (raise --budget)"
            lines.append(f"INCOMPLETE: {why}; what ran found no divergence, no invalid history, no data lost")
        else:
            lines.append("PASS: every fault class ran on every spec; no divergence, no invalid history, no data lost")
        return lines


def _pairs_text(pairs: list[tuple[str, str]], specs: list[str]) -> str:
    """The pairs as `fault on spec-file` (the spec's file name; its path when two of `specs` share a name)."""
    names = [Path(spec).name for spec in set(specs)]
    return ", ".join(
        f"{fault} on {spec if names.count(Path(spec).name) > 1 else Path(spec).name}" for fault, spec in pairs
    )


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
    faults = list(faults or fault_class_names())
    logging.getLogger("strands").setLevel(logging.CRITICAL)  # injected failures are expected; findings report them
    result = SoakResult([str(s) for s in specs], faults, seed, budget_s)
    root = workdir or default_workdir()  # where the pytest plugin puts its scratch; a killed soak's is swept next time
    goldens: dict[Path, WorkflowGoldenRun | None] = {}
    started = time.monotonic()
    display = _Display(budget_s, enabled=progress)
    ctrl_c = _CtrlC()
    try:
        with display, ctrl_c:
            for round_number, spec, fault, level, overrides in _work(specs, faults):
                elapsed = time.monotonic() - started
                if ctrl_c.pressed:  # a run that caught the KeyboardInterrupt (a golden run) still ends the soak
                    raise KeyboardInterrupt
                if elapsed >= budget_s:
                    result.out_of_budget = True
                    break
                if max_rounds is not None and round_number >= max_rounds:
                    break
                display.update(elapsed, f"round {round_number}: {fault} ({level}) on {spec.name}")
                if spec not in goldens:
                    goldens[spec] = _golden(spec, seed, root, result)
                golden = goldens[spec]
                if golden is None:
                    continue
                target = golden.target
                workspace = root / target.name / f"{fault}-{round_number}"
                item = f"{fault} ({level}) on {spec.name}"
                run = _run_item(
                    functools.partial(
                        explore_fault,
                        fault,
                        target,
                        workspace,
                        level=level,
                        golden=golden,
                        seed=seed + round_number,
                        **overrides,
                    ),
                    FaultRun(fault, target.name),
                    workspace,
                    deadline=started + budget_s,
                )
                if run is None:
                    result.cut_short.append(item)
                    result.out_of_budget = True
                else:
                    result.runs.append(run)
                    result.rounds = max(result.rounds, round_number + 1)
                    pair = (fault, str(spec))
                    result.explored[pair] = result.explored.get(pair, 0) + run.explored
                reset_dir(workspace)
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        result.elapsed_s = time.monotonic() - started
        if workdir is None:
            FileOps().remove_tree(root)
    return result


def _run_item(explore: Any, run: FaultRun, workspace: Path, *, deadline: float) -> FaultRun | None:
    """Run one work item in a forked child in its own process group; its `FaultRun` comes back through a file
    in `workspace`. At `deadline` (or on Ctrl+C) the child and its own children are killed: None."""
    result_file = workspace / "fault-run.pickle"

    def body() -> int:
        os.setpgid(0, 0)
        try:
            explored = explore()
        except Exception as exc:  # a harness or setup failure is reported, and the soak goes on
            explored = run
            explored.add("harness", "-", "harness-error", f"{type(exc).__name__}: {exc}")
        write_scratch(result_file, pickle.dumps(explored))
        return 0

    pid = fork_child(body)
    with contextlib.suppress(OSError):  # the child may have set it first, or already ended
        os.setpgid(pid, pid)  # also here: the group exists before the parent may have to kill it
    try:
        ended = wait_child(pid, timeout=max(0.0, deadline - time.monotonic()))
    except KeyboardInterrupt:
        _kill_group(pid)
        raise
    if ended.signal == signal.SIGKILL or not result_file.is_file():
        _kill_group(pid)  # what the item forked dies with it
        if ended.signal == signal.SIGKILL:
            return None
        run.add("harness", "-", "harness-error", f"the work item's process ended without a result ({ended.describe()})")
        return run
    return pickle.loads(result_file.read_bytes())


class _CtrlC:
    """Remembers a Ctrl+C (then raises KeyboardInterrupt as usual), so the soak ends even when the code it
    interrupted caught the KeyboardInterrupt."""

    def __init__(self) -> None:
        self.pressed = False
        self._previous: Any = None

    def __enter__(self) -> _CtrlC:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _handle(self, signum: int, frame: Any) -> None:
        self.pressed = True
        raise KeyboardInterrupt


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _golden(spec: Path, seed: int, root: Path, result: SoakResult) -> WorkflowGoldenRun | None:
    """The spec's golden run (its cassette answering, when it has one); None when it is not explorable or cannot
    run at all (nothing to break: reported)."""
    try:
        target = spec_target(spec, seed=seed)
    except NotExplorable as reason:
        result.not_explorable.append(f"{spec}: {reason}")
        return None
    try:
        return run_golden(target, root / target.name / "golden").require_completed()
    except Exception as exc:
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
