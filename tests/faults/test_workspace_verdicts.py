"""The gate never blames a committed tool: with an appending tool that is not marked non-idempotent, a point fails
`workspace` exactly where a real crash and a real resume run the tool twice (after it ran and before its result
was committed), and passes everywhere else, as a real crash shows point by point (in process at every point, and
for the points around one call a SIGKILLed process resumed by `strands run --resume`); and a resume stopped where it
converged on the golden run is judged on a workspace holding exactly the committed effects, so concurrent units
whose tools write files idempotently pass every point."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from strands import tool

from strands_durable import CrashPoints, InjectedCrash, LocalStore, RunOptions, resume, run_workflow, tool_workspace
from strands_durable.faults.classes.registry import explore_fault
from strands_durable.faults.kit.forking import run_in_child
from strands_durable.faults.kit.golden import WorkflowGoldenRun
from strands_durable.faults.kit.observe import crash_at
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.faults.kit.workspace import read_files, write_files
from tests.faults.conftest import describe
from tests.faults.test_kit_targets import SPEC_WITH_LEDGER, record_unmarked

EVERY_POINT: dict[str, dict[str, Any]] = {
    "interrupt": {"max_points": None},
    "kill": {"max_points": None, "signals": ("SIGKILL",), "random_moments": 0},
}

PARALLEL_SPEC = """
version: 0
name: payments-by-week
runtime: {{provider: synthetic, model_id: synthetic-1, max_parallel: 2}}
agents:
  clerk: {{prompt: You record every payment in the ledger., tools: [{tool}]}}
pattern:
  type: workflow
  config:
    tasks:
      - {{id: this_week, agent: clerk, input: Record the payments of this week.}}
      - {{id: last_week, agent: clerk, input: Record the payments of last week.}}
      - id: refunds
        agent: clerk
        deps: [this_week, last_week]
        input: "Refunds: {{{{ tasks.this_week.response }}}}"
"""


@tool(context=True)
def file_receipt(amount: str, tool_context: Any) -> str:
    """File the receipt of a payment (the same file each time: running it again changes nothing).

    Args:
        amount: The amount paid.
    """
    receipts = tool_workspace(tool_context) / "books"
    (receipts / f"{amount.replace(' ', '-')}.txt").write_text(f"paid {amount}\n", encoding="utf-8")
    return "filed"


def _target(root: Path, spec: str, name: str, function: Any) -> ChaosTarget:
    state = root / "state"
    (state / "books").mkdir(parents=True)
    (state / "books" / "ledger.txt").write_text("opening balance\n")
    path = root / "payments.strands.yaml"
    path.write_text(spec.format(tool=name))
    return ChaosTarget(path, tools={name: function}, workspace=state)


def _ledger(files: dict[str, bytes]) -> Counter[str]:
    return Counter(files["books/ledger.txt"].decode().splitlines())


def _real_crash_reruns(target: ChaosTarget, point_id: str, root: Path, golden_ledger: Counter[str]) -> bool:
    """Crash a real run at `point_id` (a crash-point subscriber), resume it in fresh objects as `strands run
    --resume` does, and say whether the ledger then differs from the uninterrupted run's."""
    sessions, scratch = root / "sessions", root / "workspace"
    write_files(scratch, read_files(target.workspace))

    def options(bus: Any = None) -> RunOptions:
        return RunOptions(
            provider="synthetic",
            seed=target.seed,
            out_dir=root / "out",
            scratch_dir=scratch,
            extra_tools=dict(target.tools),
            crash_points=bus,
            lockstep=True,  # concurrent units take turns as in the golden run
        )

    with pytest.raises(InjectedCrash):
        run_workflow(target.spec_path, options(crash_at(point_id)), store=LocalStore(sessions), session_id="s")
    if LocalStore(sessions).load("s").status != "completed":  # else `strands run --resume` has nothing to do
        assert resume("s", options(), store=LocalStore(sessions)).status == "completed"
    return _ledger(read_files(scratch)) != golden_ledger


def _unmarked(root: Path, spec: str) -> tuple[ChaosTarget, WorkflowGoldenRun, set[str]]:
    """The spec with the unmarked appending tool, its golden run, and the points where a real crash and resume
    leave the ledger other than the golden run's."""
    target = _target(root, spec, "record_unmarked", record_unmarked)
    golden = run_golden(target, root / "golden")
    golden_ledger = _ledger(golden.workspace.final)
    reruns = {
        point_id
        for index, point_id in enumerate(golden.ordered_ids())
        if _real_crash_reruns(target, point_id, root / f"real-{index}", golden_ledger)
    }
    return target, golden, reruns


@pytest.fixture(scope="module")
def chain_unmarked(tmp_path_factory: pytest.TempPathFactory) -> tuple[ChaosTarget, WorkflowGoldenRun, set[str]]:
    return _unmarked(tmp_path_factory.mktemp("chain"), SPEC_WITH_LEDGER)


@pytest.fixture(scope="module")
def parallel_unmarked(tmp_path_factory: pytest.TempPathFactory) -> tuple[ChaosTarget, WorkflowGoldenRun, set[str]]:
    return _unmarked(tmp_path_factory.mktemp("parallel"), PARALLEL_SPEC)


def test_a_real_crash_runs_an_unmarked_tool_twice_only_between_its_run_and_its_results_commit(chain_unmarked) -> None:
    _, golden, reruns = chain_unmarked
    calls = {p.point.path for p in golden.points if p.point.site == "tool.executed"}
    assert len(calls) >= 4  # the chain's clerk records several payments
    expected = {f"{call}/tool.executed" for call in calls} | {f"{call}/result/store.before_commit" for call in calls}
    assert reruns == expected


@pytest.mark.parametrize(
    ("spec", "fault"),
    [("chain_unmarked", "interrupt"), ("chain_unmarked", "kill"), ("parallel_unmarked", "interrupt")],
)
def test_the_gate_fails_exactly_the_points_where_a_real_crash_runs_the_tool_twice(
    request: pytest.FixtureRequest, spec: str, fault: str, tmp_path: Path
) -> None:
    target, golden, reruns = request.getfixturevalue(spec)
    run = explore_fault(fault, target, tmp_path / fault, golden=golden, **EVERY_POINT[fault])
    assert run.explored == len(golden.points)
    assert {f.rule for f in run.findings} == {"workspace"}
    # every other point (tool.committed, the result's store.after_commit, everything later) passes
    assert sorted({f.point for f in run.findings}) == sorted(reruns)


@pytest.mark.parametrize("fault", ["interrupt", "kill"])
def test_concurrent_units_whose_tools_write_idempotently_pass_every_point(fault: str, tmp_path: Path) -> None:
    target = _target(tmp_path, PARALLEL_SPEC, "file_receipt", file_receipt)
    run = explore_fault(fault, target, tmp_path / "work", **EVERY_POINT[fault])
    assert run.explored > 50 and run.outcomes["converged"] > 0, run.summary()
    assert not run.findings, describe(run.findings)


LEDGER_TOOLS = '''
from strands import tool

from strands_durable import tool_workspace


@tool(context=True)
def record_unmarked(amount: str, tool_context) -> str:
    """Append a payment to the ledger (not marked non-idempotent).

    Args:
        amount: The amount paid.
    """
    scratch = tool_workspace(tool_context)
    scratch.mkdir(parents=True, exist_ok=True)
    with open(scratch / "ledger.txt", "a", encoding="utf-8") as ledger:
        ledger.write(f"paid {amount}\\n")
    return "recorded"
'''


def _cli_spec(root: Path) -> Path:
    """SPEC_WITH_LEDGER with its tool in a module beside the spec, so `strands run --resume` finds it too."""
    (root / "ledger_tools.py").write_text(LEDGER_TOOLS, encoding="utf-8")
    spec = SPEC_WITH_LEDGER.format(tool="record_unmarked").replace(
        "agents:", 'tools:\n  python: ["ledger_tools:record_unmarked"]\nagents:', 1
    )
    path = root / "payments.strands.yaml"
    path.write_text(spec, encoding="utf-8")
    return path


def _ledger_of(sessions: Path) -> Counter[str]:
    ledger = LocalStore(sessions).workspace("s").scratch_dir / "ledger.txt"
    return Counter(ledger.read_text(encoding="utf-8").splitlines())


def _killed_and_resumed_by_the_cli(spec: Path, point_id: str, root: Path) -> Counter[str]:
    """A child process runs the spec and is SIGKILLed at `point_id`; `strands run --resume` finishes it. The
    ledger it leaves."""
    sessions = root / "sessions"
    bus = CrashPoints()
    bus.subscribe(lambda point: os.kill(os.getpid(), signal.SIGKILL) if point.id == point_id else None)

    def crashing_run() -> int:
        run_workflow(
            spec,
            RunOptions(provider="synthetic", out_dir=root / "out", crash_points=bus),
            store=LocalStore(sessions),
            session_id="s",
        )
        return 0

    assert run_in_child(crashing_run).signal == signal.SIGKILL
    resumed = subprocess.run(
        [sys.executable, "-m", "strands_durable", "run", "--resume", "s", "--sessions-dir", str(sessions)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    return _ledger_of(sessions)


@pytest.mark.slow
def test_a_killed_run_that_strands_run_resume_finishes_runs_an_unmarked_tool_twice_only_before_its_commit(
    tmp_path: Path,
) -> None:
    spec = _cli_spec(tmp_path)
    seen: list[str] = []
    bus = CrashPoints()
    bus.subscribe(lambda point: seen.append(point.id))
    golden_sessions = tmp_path / "golden"
    run_workflow(
        spec,
        RunOptions(provider="synthetic", out_dir=tmp_path / "out", crash_points=bus),
        store=LocalStore(golden_sessions),
        session_id="s",
    )
    golden = _ledger_of(golden_sessions)
    call = next(i.removesuffix("/tool.executed") for i in seen if i.endswith("/tool.executed"))
    # the points from the first call's start to two past its result's commit
    window = seen[seen.index(f"{call}/tool.before") : seen.index(f"{call}/tool.committed") + 3]
    assert {f"{call}/result/store.after_commit", f"{call}/tool.committed"} <= set(window)
    twice = {
        point_id
        for index, point_id in enumerate(window)
        if _killed_and_resumed_by_the_cli(spec, point_id, tmp_path / f"kill-{index}") != golden
    }
    assert twice == {f"{call}/tool.executed", f"{call}/result/store.before_commit"}
