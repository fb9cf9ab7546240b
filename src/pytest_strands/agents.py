"""Python agents under `pytest --strands-chaos`: `strands_chaos.run_agent` and agent factories collected like specs.

The machinery is `strands_durable.faults.agents.engine`; this module turns its outcomes into pytest failures and
the items' properties (the summary line, the JSON report). A factory is collected when it carries the
`strands_chaos` marker with `prompts=` (on the function, or `pytestmark` of its module for every function whose
name starts with `build_agent`): one `golden` item and one item per crash point, as for a spec.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_strands.items import SUITE, ChaosFailure, ChaosItem
from strands_durable.faults.kit.coverage import one_point, site_kind
from strands_durable.faults.kit.report import PROPERTY_PREFIX

FACTORY_PREFIX = "build_agent"
OPTIONS = ("prompts", "max_points", "session_id", "cassette")


def chaos_for(suite: Any, build_agent: Any, prompts: Any, options: dict[str, Any], where: Path) -> Any:
    """The engine's settings from the test's options and the command line's (faults, max points, record)."""
    from strands_durable.errors import UsageError
    from strands_durable.faults.agents.run import AgentChaos
    from strands_durable.faults.classes.registry import AGENT_FAULTS

    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ChaosFailure(f"run_agent: unknown options {unknown} (known: {', '.join(OPTIONS)})")
    settings = suite.settings
    max_points = options.get("max_points", settings.max_points)
    try:
        return AgentChaos(
            build_agent,
            prompts,
            session_id=options.get("session_id") or "chaos-agent",
            max_points=max_points,
            faults=[f for f in settings.faults if f in AGENT_FAULTS] or ["interrupt"],
            cassette=_cassette(options.get("cassette"), where, settings.record),
            record=settings.record,
        )
    except UsageError as exc:
        raise ChaosFailure(str(exc)) from None


def _cassette(path: Any, where: Path, record: bool) -> Any:
    """The cassette of the user's real model: recorded by the golden run under --strands-record, else replayed."""
    if path is None:
        return None
    from strands_durable.faults.kit.cassette import Cassette

    path = Path(path) if Path(path).is_absolute() else where / path
    if record:
        from strands_durable.runner.run_secrets import secret_values

        return Cassette(path, secrets=tuple(secret_values(None)))  # credential-named environment variables
    if not path.exists():
        raise ChaosFailure(f"no cassette {path}; record one with: pytest --strands-chaos --strands-record")
    return Cassette.load(path)


def workdir_for(suite: Any, nodeid: str) -> Path:
    return suite.workdir / "agents" / re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid)[-120:]


def golden_failure(name: str, golden: Any) -> ChaosFailure:
    return ChaosFailure(f"the golden run of {name} (no faults) failed:\n" + "\n".join(map(str, golden.problems)))


def properties(
    name: str,
    golden: Any,
    outcomes: list[Any],
    *,
    with_golden: bool = True,
    orders: tuple[int, int] | None = None,
    point_name: str | None = None,
) -> list[tuple[str, Any]]:
    """One property record for the golden run (with the completion orders explored of those possible, when
    known), one per explored point (what ChaosTotals adds up)."""
    records: list[dict[str, Any]] = []
    if with_golden:
        records.append(
            {
                "workflow": name,
                "explored": 0,
                "crash_points": len(golden.points),
                "divergences": int(bool(golden.problems)),
                "invalid_histories": 0,
                "problems": json.dumps([str(p) for p in golden.problems]),
                **({"orders": json.dumps(list(orders))} if orders is not None else {}),
            }
        )
    for outcome in outcomes:
        rules = {f.rule for f in outcome.findings}
        site = site_kind(outcome.point)
        records.append(
            {
                "workflow": name,
                "point": point_name or outcome.point,  # an order's point: its id and the order
                "explored": int(outcome.fired),
                "sites": site,
                "divergences": int(bool(rules - {"invalid-request"})),
                "invalid_histories": int("invalid-request" in rules),
                "problems": json.dumps([str(f) for f in outcome.findings]),
                "coverage": one_point(outcome.fault, site, outcome.fired),
            }
        )
    return [(PROPERTY_PREFIX + key, value) for record in records for key, value in record.items()]


def failure_text(name: str, outcomes: list[Any]) -> str | None:
    """The points that failed, the rules they broke and the first few in full; None when all passed."""
    from strands_durable.faults.agents.engine import rule_counts

    failing = [o for o in outcomes if not o.ok]
    if not failing:
        return None
    rules = ", ".join(f"{rule} {count}" for rule, count in sorted(rule_counts(outcomes).items()))
    shown = "\n\n".join(o.describe() for o in failing[:5])
    return f"{len(failing)} of {len(outcomes)} crash points of {name} failed (by rule: {rules}):\n{shown}"


def run_agent(node: pytest.Item, suite: Any, build_agent: Any, prompts: Any, options: dict[str, Any]) -> list[Any]:
    """The fixture's `run_agent`: golden run, every (sampled) point, both resumes; raises ChaosFailure."""
    from strands_durable.faults.agents.engine import explore

    name = getattr(build_agent, "__name__", str(build_agent))
    chaos = chaos_for(suite, build_agent, prompts, options, node.path.parent)
    golden, outcomes = explore(chaos, workdir_for(suite, node.nodeid))
    node.user_properties.extend(properties(name, golden, outcomes))
    if golden.problems:
        raise golden_failure(name, golden)
    failure = failure_text(name, outcomes)
    if failure:
        raise ChaosFailure(failure)
    return outcomes


# -- collection: a test file of agent factories -----------------------------------------------------------------
def factory_options(collector: pytest.Collector, name: str, obj: Any) -> dict[str, Any] | None:
    """The marker options of a collectable factory, or None: a function with the marker's `prompts`, either on
    itself or on its module (then its name starts with `build_agent`)."""
    if not callable(obj) or not hasattr(obj, "__code__") or name.startswith("test"):
        return None
    own, module = _marks(obj), _marks(getattr(collector, "obj", None))
    if not own and not name.startswith(FACTORY_PREFIX):
        return None
    options: dict[str, Any] = {}
    for mark in [*module, *own]:
        options.update(mark.kwargs)
    return options if "prompts" in options else None


def _marks(obj: Any) -> list[Any]:
    """The `strands_chaos` marks of a function or module (`pytestmark` is one mark or a list)."""
    found = getattr(obj, "pytestmark", [])
    found = found if isinstance(found, list) else [found]
    return [m for m in (getattr(m, "mark", m) for m in found) if m.name == "strands_chaos"]


class AgentFactory(pytest.Collector):
    """A factory function: its golden run and one item per crash point (both resume styles in each)."""

    def __init__(self, *, factory: Any, options: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factory = factory
        self.options = options

    def collect(self):  # type: ignore[override]
        suite = self.config.stash[SUITE]
        options = dict(self.options)
        prompts = options.pop("prompts")
        try:
            chaos = chaos_for(suite, self.factory, prompts, options, self.path.parent)
        except ChaosFailure as exc:
            yield AgentGoldenItem.from_parent(self, name="golden", golden=None, error=str(exc))
            return
        from strands_durable.faults.agents.engine import run_golden
        from strands_durable.faults.agents.orders import orders_possible, points_inside

        golden = run_golden(chaos, workdir_for(suite, self.nodeid))
        if golden.problems:
            yield AgentGoldenItem.from_parent(self, name="golden", golden=golden, error=None)
            return
        ordered = list(self._ordered_goldens(suite, chaos))
        explored = len(chaos.batches.batches) + sum(1 for _, reached, _ in ordered if reached)
        orders = (explored, orders_possible(chaos.batches))
        yield AgentGoldenItem.from_parent(self, name="golden", golden=golden, error=None, orders=orders)
        for point_id in golden.sample(chaos.max_points):
            for fault in chaos.faults:
                name = point_id + ("" if fault == "interrupt" else f"[{fault}]")
                yield AgentPointItem.from_parent(self, name=name, golden=golden, point_id=point_id, fault=fault)
        for order, reached, golden_o in ordered:
            label = f"batch[{order.batch}]/{order.label}"
            yield AgentOrderItem.from_parent(self, name=f"golden/{label}", golden=golden_o, reached=reached)
            if not reached:
                continue
            for point_id in points_inside(golden_o, golden_o.target.batches.batches[order.batch]):
                name = f"{point_id}/{order.label}"  # the order's points under `interrupt` (a killed child re-imports)
                yield AgentPointItem.from_parent(self, name=name, golden=golden_o, point_id=point_id, fault="interrupt")

    def _ordered_goldens(self, suite: Any, chaos: Any) -> Any:
        """(order, whether its golden run reached it, that golden run) for each order the policy explores."""
        from strands_durable.faults.agents.engine import run_golden
        from strands_durable.faults.agents.orders import tool_orders

        settings = suite.settings
        for order in tool_orders(chaos.batches, settings.orders, seed=settings.seed, bound=settings.orders_bound):
            ordered = dataclasses.replace(chaos, tool_order=order)
            golden = run_golden(ordered, workdir_for(suite, f"{self.nodeid}/batch{order.batch}/{order.label}"))
            yield order, ordered.batches.reached and not golden.problems, golden


class AgentGoldenItem(ChaosItem):
    def __init__(self, *, error: str | None, orders: tuple[int, int] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.orders = orders  # (completion orders explored, possible) over the golden run's turns of several tools

    @property
    def workflow(self) -> str:
        return self.parent.name  # type: ignore[union-attr]

    def runtest(self) -> None:
        if self.golden is None:
            raise ChaosFailure(str(self.error))
        self.user_properties.extend(properties(self.workflow, self.golden, [], orders=self.orders))
        if self.golden.problems:
            raise golden_failure(self.workflow, self.golden)


class AgentOrderItem(ChaosItem):
    """The golden run of one completion order of a turn's concurrent tools: fails `not-fired` when it did not come
    out in that order (the points of an order never reached are not explored, and a gate cannot pass by it)."""

    def __init__(self, *, reached: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reached = reached

    @property
    def workflow(self) -> str:
        return self.parent.name  # type: ignore[union-attr]

    def runtest(self) -> None:
        problems = [str(p) for p in self.golden.problems]
        if not self.reached:
            problems.insert(0, f"[not-fired] the order {self.name.removeprefix('golden/')} was never reached")
        record = {"workflow": self.workflow, "explored": 0, "divergences": int(bool(problems))}
        record.update(invalid_histories=0, problems=json.dumps(problems))
        self.user_properties.extend((PROPERTY_PREFIX + key, value) for key, value in record.items())
        if problems:
            raise ChaosFailure("\n".join(problems))


class AgentPointItem(ChaosItem):
    def __init__(self, *, point_id: str, fault: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.point_id = point_id
        self.fault = fault

    @property
    def workflow(self) -> str:
        return self.parent.name  # type: ignore[union-attr]

    def runtest(self) -> None:
        from strands_durable.faults.agents.engine import crash_at
        from strands_durable.faults.kit.scratch import reset_dir

        outcome = crash_at(self.golden, self.point_id, self.fault)
        reset_dir(outcome.crashed.root.parent)
        named = self.name if self.name != self.point_id else None
        self.user_properties.extend(
            properties(self.workflow, self.golden, [outcome], with_golden=False, point_name=named)
        )
        if not outcome.ok:
            raise ChaosFailure(outcome.describe())
