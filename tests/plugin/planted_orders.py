"""A bug planted for the unit-order tests only (never imported by the product): a runner that, on resume, takes
the later declared of two concurrent workflow tasks for the slower one, and re-issues its calls when the earlier
one has not finished (its committed outcome ignored, its agent asked again in a fresh conversation). In the
golden order the earlier task always finishes first, so only another completion order of the layer shows it.

`SLOWER_REISSUED` is a conftest for an inner pytest session: applied when that session configures, never undone
(the session runs in its own process, or pytester forgets the modules it imported)."""

SLOWER_REISSUED = """
import weakref

from strands_durable.runner import units
from strands_durable.runner.patterns import workflow

_completed = units.completed
_execute_step = workflow.execute_step
_REISSUED = {}  # (id(ctx), unit) -> that ctx, weakly: a later run's context may reuse a freed one's id


def _taken_for_the_slower(ctx, unit):
    record = _completed(ctx, unit)
    if record is None or not unit.startswith("task:"):
        return record
    tasks = list(ctx.spec.pattern.config.tasks)
    ids = [task.id for task in tasks]
    me = tasks[ids.index(unit.removeprefix("task:"))]
    for sibling in tasks[: ids.index(me.id)]:
        if list(sibling.deps) == list(me.deps) and _completed(ctx, f"task:{sibling.id}") is None:
            _REISSUED[(id(ctx), unit)] = weakref.ref(ctx)
            return None
    return record


def _issued_again(ctx, ref, task, *, conv_key, **kwargs):
    held = _REISSUED.get((id(ctx), ref.unit))
    if held is not None and held() is ctx:
        conv_key = (lambda key: lambda agent: key(agent) + "_again")(conv_key)
    return _execute_step(ctx, ref, task, conv_key=conv_key, **kwargs)


units.completed = _taken_for_the_slower
workflow.execute_step = _issued_again
"""
