"""Which completion orders of a Python agent's concurrent tools to explore, and the crash points inside a turn.

The golden run observes every turn of several tools (`faults/kit/orders.py`, `BatchLog`): its toolUseIds and the
order their results came in. For each such turn the policy names other orders (`orders_to_explore`); each order
gets its own golden run, with the turn's results held in that order, and the points that lie inside the turn in
that run (from its first tool's start to its last tool's after-hook) are crashed and resumed like any other. An
order that the golden run with it did not reach (a sequential executor, a turn that never came) is `not-fired`.
"""

from __future__ import annotations

from strands_durable.faults.kit.golden import AgentGoldenRun
from strands_durable.faults.kit.orders import Batch, BatchLog, ToolOrder, orders_to_explore, possible_orders


def tool_orders(log: BatchLog, policy: str, *, seed: int = 0, bound: int = 3) -> list[ToolOrder]:
    """The orders to explore besides the golden run's own, for every turn of several concurrent tools."""
    if not log.concurrent:
        return []  # the executor runs them one at a time: their order is the toolUse order, the golden run's
    chosen = []
    for index, batch in enumerate(log.batches):
        golden = batch.completion_order
        for order in orders_to_explore(len(batch.tool_use_ids), golden, policy, seed=seed, batch=index, bound=bound):
            chosen.append(ToolOrder(index, order))
    return chosen


def orders_possible(log: BatchLog) -> int:
    """How many completion orders the golden run's turns allow in all (one per turn for a sequential executor)."""
    if not log.concurrent:
        return len(log.batches)
    return sum(possible_orders(len(batch.tool_use_ids)) for batch in log.batches)


def points_inside(golden: AgentGoldenRun, batch: Batch) -> list[str]:
    """The ids of `golden`'s points from the turn's first tool hook to its last, in run order."""
    ids = [p.point.id for p in golden.points]
    marks = [
        i for i, point_id in enumerate(ids) if any(f":{tool_use_id}/" in point_id for tool_use_id in batch.tool_use_ids)
    ]
    if not marks:
        return []
    return ids[marks[0] : marks[-1] + 1]
