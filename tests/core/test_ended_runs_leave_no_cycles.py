"""An ended invocation, and a resume that crashed, leave no reference cycle behind: their agents (with the SDK's
registries and the conversation copied into them) are freed when the run lets go of them, not when a collection of
an older generation finds them. The chaos explorer ends hundreds of such runs per second; what a cycle kept alive
was promoted and walked again by every collection until a full one freed it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from strands import Agent

from strands_durable import CrashPoints, LocalStore, run_workflow
from strands_durable.agent.durable import DurableInvoker
from strands_durable.faults.classes.explore import explore_point, iter_points
from strands_durable.faults.kit.oracle import RequestLog
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from tests.core.support import ExecutionLog, analyst_follow_up, counted_options

SPEC = Path(__file__).parent / "specs" / "chain-tools.strands.yaml"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chain-research.strands.yaml"


def agents_alive() -> int:
    return sum(isinstance(item, Agent) for item in gc.get_objects())


@contextmanager
def no_collection() -> Iterator[None]:
    """The collector off: what is still alive afterwards is kept by references, not waiting for a collection."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_an_ended_invocation_frees_its_agent_at_once(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "sessions")
    options = counted_options(ExecutionLog(tmp_path / "exec.log"), RequestLog(), out_dir=tmp_path / "out")
    session = store.open(run_workflow(SPEC, options, store=store).session_id)
    conv = next(conv for conv in session.state.conversations.values() if conv.agent == "analyst")
    invocation = analyst_follow_up(conv.key, tools_configured=True)  # the restored history holds tool blocks
    with no_collection():
        before = agents_alive()
        result = DurableInvoker(session, CrashPoints()).invoke(invocation)
        assert result.model_calls >= 1
        assert agents_alive() == before
    session.close()


def test_a_resume_that_crashed_frees_its_agents_at_once(tmp_path: Path) -> None:
    golden = run_golden(ChaosTarget(EXAMPLE), tmp_path / "golden")
    points = list(iter_points(golden, 12, 0))
    with no_collection():
        before = agents_alive()
        outcomes = [explore_point(golden, point_id, tmp_path / "points") for point_id in points]
        assert all(outcome.ok for outcome in outcomes), [o.describe() for o in outcomes if not o.ok]
        assert sum(outcome.runs for outcome in outcomes) > len(points)  # resumes that crashed again, then converged
        assert agents_alive() == before
