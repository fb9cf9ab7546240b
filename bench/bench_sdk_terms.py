"""What the Strands SDK itself costs per crash point of a one-agent chain, 10 vs 50 steps (issue 37 item 4: the
cost per point of a 50-step chain against a 10-step one, one agent for all steps).

    .venv/bin/python bench/bench_sdk_terms.py [--points-per-chain 60] [--rounds 3]

With one agent for all steps its conversation grows to the sliding window's 40 messages, and the SDK handles the
whole window at every step of an invocation, whether or not anything records it:
- every event-loop cycle starts a span that serialises every message of the window to JSON
  (`Tracer.start_event_loop_cycle_span`, also with no tracer provider: the span is non-recording, the JSON is made
  first), and every model call starts another (`start_model_invoke_span`);
- every model call deep-copies the window twice (the model middleware's context and `_normalize_messages`);
- every agent built (one per unit a resume runs: fresh agents are the warm resume's rule) discovers the built-in
  plugins' hooks (`Agent.__init__`), and the runner copies the window into it once (`copy_json_data`, in C).
For each chain the points bench_chaos.py's chain comparison explores are explored once under cProfile, for exact
counts per point of cycles, model calls and agents built, then timed `--rounds` times (the collector's own time,
from `gc.callbacks`, printed beside: it grows with the heap the longer golden run keeps). Each term is timed without
the profiler on the windows the golden run's agent had (the last 40 messages of its conversation at each of its
model answers, the window the SDK trims to at the end of each invocation) and multiplied out: milliseconds per point
per term, and the chain ratio with every window term held at the 10-step chain's cost. Printed, not asserted.
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import gc
import os
import pstats
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from bench_chaos import chain_spec

from strands_durable.faults.classes.explore import _sample_verdicts, explore_point, iter_points
from strands_durable.faults.kit.runs import run_golden
from strands_durable.faults.kit.target import ChaosTarget
from strands_durable.faults.suite import default_workdir

WINDOW = 40  # SlidingWindowConversationManager's default window_size, which the chain specs keep


class _CollectorClock:
    """A `gc.callbacks` entry adding up the time the collector runs."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._start


def _per_call_seconds(fn: Any, arguments: list[Any], repeat: int = 5) -> float:
    """The best of `repeat` passes over every argument, per call."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for argument in arguments:
            fn(argument)
        best = min(best, (time.perf_counter() - start) / len(arguments))
    return best


def _windows(golden: Any) -> list[list[dict[str, Any]]]:
    state = golden.state_at(len(golden.journal))
    (conv,) = state.conversations.values()
    ends = [i for i, message in enumerate(conv.messages) if message.get("role") == "assistant"]
    return [conv.messages[max(0, end - WINDOW) : end] for end in ends]


def _counts(golden: Any, ids: list[str], points: Path) -> dict[str, float]:
    """Calls per point of the SDK functions the terms are made in, counted by cProfile over one pass."""
    profile = cProfile.Profile()
    profile.enable()
    for point_id in ids:
        explore_point(golden, point_id, points)
    profile.disable()
    wanted = {
        ("tracer.py", "start_event_loop_cycle_span"): "cycles",
        ("tracer.py", "start_model_invoke_span"): "model calls",
        ("agent.py", "__init__"): "agents built",
    }
    counts = dict.fromkeys(wanted.values(), 0.0)
    for (filename, _, name), (_, calls, *_) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        key = wanted.get((Path(filename).name, name))
        if key is not None and "strands/" in filename:
            counts[key] += calls / len(ids)
    return counts


def _term_seconds(windows: list[list[dict[str, Any]]]) -> dict[str, float]:
    """Seconds per call of each term on these windows."""
    from strands import Agent
    from strands.agent.conversation_manager import SlidingWindowConversationManager
    from strands.telemetry.tracer import get_tracer
    from strands.tools.executors import SequentialToolExecutor
    from strands.tools.registry import ToolRegistry
    from strands_tools import calculator

    from strands_durable.history.copying import copy_json_data
    from strands_durable.models.synthetic import SyntheticModel

    tracer = get_tracer()
    registry = ToolRegistry()
    registry.process_tools([calculator])
    tools = list(registry.registry.values())

    def cycle_span(window: list[dict[str, Any]]) -> None:
        tracer.start_event_loop_cycle_span(invocation_state={}, messages=window).end()

    def model_span(window: list[dict[str, Any]]) -> None:
        tracer.start_model_invoke_span(messages=window, model_id="synthetic").end()

    def agent(window: list[dict[str, Any]]) -> None:
        Agent(
            model=SyntheticModel(),
            messages=copy_json_data(window),
            tools=list(tools),
            system_prompt="You estimate and check numbers with the calculator.",
            callback_handler=None,
            conversation_manager=SlidingWindowConversationManager(),
            tool_executor=SequentialToolExecutor(),
            agent_id="a0",
            state={},
        )

    return {
        "cycle span (JSON of the window)": _per_call_seconds(cycle_span, windows),
        "model span (JSON of the window)": _per_call_seconds(model_span, windows),
        "two deep copies per model call": 2 * _per_call_seconds(copy.deepcopy, windows),
        "agent built, its window copied in": _per_call_seconds(agent, windows),
    }


TERM_COUNT = {
    "cycle span (JSON of the window)": "cycles",
    "model span (JSON of the window)": "model calls",
    "two deep copies per model call": "model calls",
    "agent built, its window copied in": "agents built",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points-per-chain", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    workdir = default_workdir()
    os.environ["STRANDS_CHAOS_TMPDIR"] = str(workdir)  # what the runs make lives in it, removed at the end
    try:
        per_point: dict[int, float] = {}
        collected: dict[int, float] = {}
        terms: dict[int, dict[str, float]] = {}
        for steps in (10, 50):
            spec = workdir / f"chain-{steps}-shared.strands.yaml"
            spec.write_text(chain_spec(steps, shared_agent=True))
            golden = run_golden(ChaosTarget(spec), workdir / spec.stem / "golden")
            points = workdir / spec.stem / "points"
            _sample_verdicts(golden, points / "real-segment")
            ids = list(iter_points(golden, args.points_per_chain, 0))
            counts = _counts(golden, ids, points)
            walls, collecting = [], _CollectorClock()
            gc.callbacks.append(collecting)
            try:
                for _ in range(args.rounds):
                    start = time.perf_counter()
                    for point_id in ids:
                        explore_point(golden, point_id, points)
                    walls.append((time.perf_counter() - start) / len(ids))
            finally:
                gc.callbacks.remove(collecting)
            per_point[steps] = statistics.median(walls)
            collector = collected[steps] = collecting.seconds / (args.rounds * len(ids))
            windows = _windows(golden)
            seconds = _term_seconds(windows)
            terms[steps] = {term: seconds[term] * counts[TERM_COUNT[term]] for term in seconds}
            print(
                f"chain of {steps} steps, one agent: {per_point[steps] * 1000:.2f} ms per point (median of "
                f"{args.rounds}); per point {', '.join(f'{v:.2f} {k}' for k, v in counts.items())}; window "
                f"{statistics.mean(len(w) for w in windows):.1f} messages on average"
            )
            for term, cost in terms[steps].items():
                print(f"  {term:36s} {seconds[term] * 1e6:7.1f} us per call = {cost * 1000:.3f} ms per point")
            print(f"  {'the cyclic garbage collector':36s} {collector * 1000:.3f} ms per point (all rounds)")
        ratio = per_point[50] / per_point[10]
        excess = sum(terms[50].values()) - sum(terms[10].values())
        print(
            f"ratio 50 / 10 steps: {ratio:.2f}; these terms add {excess * 1000:.2f} ms per point to the 50-step "
            f"chain; with them held at the 10-step chain's cost: {(per_point[50] - excess) / per_point[10]:.2f}"
        )
        rest = {steps: per_point[steps] - collected[steps] for steps in per_point}  # the collector's mean taken out
        print(
            f"without the collector's time: ratio {rest[50] / rest[10]:.2f}; and with the terms above held too: "
            f"{(rest[50] - excess) / rest[10]:.2f}"
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
