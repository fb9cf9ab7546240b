"""The chaos plugin's pytest items: a spec file's golden item, one item per crash point (named by its id, so `-k`
reruns one), its `schedules` item, one item per real-fault class, and the item a spec that cannot be explored
becomes. Each item asks the session's chaos suite (`SUITE`, faults/suite.py) for its work and fails with a
`ChaosFailure` the user reads; the agent factories' items (agents.py) share the base `ChaosItem`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_strands.keys import SUITE, ChaosFailure

DEALER = pytest.StashKey[Any]()  # the session's `ItemDealer` while forked workers run items (workers.py)
ItemResult = tuple[list[tuple[str, Any]], str | None]  # an item's properties, and its failure text or None


class SpecFile(pytest.File):
    def collect(self):  # type: ignore[override]
        from pytest_strands.collect import hitl_hint
        from strands_durable.faults.kit.target import NotExplorable

        suite = self.config.stash[SUITE]
        try:
            golden = suite.golden(suite.target(self.path))
        except NotExplorable as reason:  # network tools without a cassette: never passed, never explored
            yield NotExplorableItem.from_parent(self, name="not-explorable", golden=None, reason=reason)
            return
        except Exception as exc:  # a spec or provider error: one failing golden item says it in one line
            yield GoldenItem.from_parent(self, name="golden", golden=None, error=hitl_hint(exc))
            return
        ordered = suite.unit_orders(golden)
        orders = suite.orders_coverage(golden, ordered)
        yield GoldenItem.from_parent(self, name="golden", golden=golden, error=None, orders=orders)
        for point_id in suite.point_ids(golden):
            yield CrashPointItem.from_parent(self, name=point_id, golden=golden)
        if suite.settings.schedules > 0:
            orders = [run.golden for run in ordered if run.reached]
            yield ScheduleItem.from_parent(self, name="schedules", golden=golden, orders=orders)
        for fault in suite.settings.faults:
            if fault != "interrupt":
                yield RealFaultItem.from_parent(self, name=f"fault:{fault}", golden=golden, fault=fault)
        for run in ordered:  # each order's golden run, then its points inside the layer (under `interrupt`)
            yield UnitOrderItem.from_parent(self, name=f"golden/{run.order.name}", golden=run.golden, run=run)
            for point_id in run.point_ids:
                name = f"{point_id}/{run.order.label}"
                yield CrashPointItem.from_parent(self, name=name, golden=run.golden, point_id=point_id)


class ChaosItem(pytest.Item):
    def __init__(self, *, golden: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.golden = golden

    @property
    def workflow(self) -> str:
        return self.path.name

    def release(self) -> None:
        """Let go of the golden runs: every item of the workflow has run (pytest_strands/release.py)."""
        self.golden = None

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ChaosFailure):
            from pytest_strands.reproduce import reproduce_line

            return f"{self.workflow}::{self.name}\n{excinfo.value}\n{reproduce_line(self)}"
        return super().repr_failure(excinfo, style=style)  # type: ignore[return-value]

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"strands-chaos {self.name}"


class GoldenItem(ChaosItem):
    def __init__(self, *, error: str | None, orders: tuple[int, int] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.orders = orders  # (completion orders explored, possible) over the golden run's layers of units

    def runtest(self) -> None:
        from strands_durable.faults.kit.findings import Finding
        from strands_durable.faults.suite import golden_properties

        problems = self.golden.problems if self.golden is not None else [Finding("golden-run", str(self.error))]
        self.user_properties.extend(golden_properties(self.workflow, self.golden, problems, orders=self.orders))
        if problems:
            raise ChaosFailure("the golden run (no faults) failed:\n" + "\n".join(str(p) for p in problems))


class UnitOrderItem(ChaosItem):
    """The golden run of one completion order of a layer's concurrent units: fails `not-fired` when its units
    did not finish in that order (its points are then not explored, and a gate cannot pass by it)."""

    def __init__(self, *, run: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run = run

    def release(self) -> None:
        super().release()
        self.run = None

    def runtest(self) -> None:
        from strands_durable.faults.suite import order_properties

        problems = [str(p) for p in self.golden.problems]
        if not self.run.reached:
            problems.insert(0, f"[not-fired] the order {self.run.order.name} was never reached")
        self.user_properties.extend(order_properties(self.workflow, problems))
        if problems:
            raise ChaosFailure("\n".join(problems))


class NotExplorableItem(ChaosItem):
    """A spec whose network tools have no cassette: fails with the command that records one."""

    def __init__(self, *, reason: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reason = reason

    def runtest(self) -> None:
        from strands_durable.faults.suite import not_explorable_properties

        self.user_properties.extend(not_explorable_properties(self.workflow, self.reason))
        raise ChaosFailure(str(self.reason))


class DealtItem(ChaosItem):
    """An item whose work a forked worker may do (`--strands-chaos-workers`, pytest_strands/workers.py): `work`
    computes its properties and failure text; `runtest` takes them from the worker that ran it, or runs it here.
    `work_imports`: the modules its work imports on first use, imported before the workers fork so that every
    worker inherits them instead of importing them again (and the pytest process has them for its summary)."""

    work_imports: tuple[str, ...] = ()

    def work(self) -> ItemResult:
        raise NotImplementedError

    def runtest(self) -> None:
        dealer = self.config.stash.get(DEALER, None)
        properties, failure = dealer.result(self) if dealer is not None else self.work()
        self.user_properties.extend(properties)
        if failure is not None:
            raise ChaosFailure(failure)


class CrashPointItem(DealtItem):
    work_imports = ("strands_durable.faults.classes.explore",)

    def __init__(self, *, point_id: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.point_id = point_id or self.name  # an order's point is named `<point id>/order[...]`

    def work(self) -> ItemResult:
        from strands_durable.faults.suite import outcome_properties

        outcome = self.config.stash[SUITE].explore(self.golden, self.point_id)
        failure = None if outcome.ok else outcome.describe()
        return outcome_properties(self.workflow, self.golden, outcome), failure


class ScheduleItem(DealtItem):
    runs_schedules = True  # its command line names --strands-chaos-schedules (reproduce.py)
    # hypothesis (~0.3 s to import), which hypothesis's own pytest plugin also imports for its terminal summary
    work_imports = ("strands_durable.faults.classes.schedule", "hypothesis.strategies")

    def __init__(self, *, orders: list[Any] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.orders = orders or []  # the golden runs of the unit orders explored, a schedule may run in one

    def release(self) -> None:
        super().release()
        self.orders = []

    def work(self) -> ItemResult:
        from strands_durable.faults.classes.schedule import explore_schedules
        from strands_durable.faults.suite import outcome_properties, schedules_properties

        suite = self.config.stash[SUITE]
        result = explore_schedules(
            self.golden, suite.scratch(self.golden, "schedules"), examples=suite.settings.schedules, orders=self.orders
        )
        properties = []
        if result.failure is not None:
            where = result.failure_golden or self.golden
            properties += outcome_properties(self.workflow, where, result.failure, counts_as_point=False)
        properties += schedules_properties(self.workflow, result.outcomes, result.failure is not None)
        if result.failure is None:
            return properties, None
        unit_order = result.failure_golden.target.unit_order if result.failure_golden else ()
        text = f"minimal failing schedule of {result.examples} tried:\n{result.failure.describe()}"
        if unit_order:
            text += f"\nin the completion order: {', '.join(unit_order)} first"
        kept = suite.settings.keep_failures
        if kept is not None:
            from pytest_strands.kept import write_kept_failure

            path = write_kept_failure(kept, self.path, result.failure.point_ids, unit_order, text, suite.settings)
            text += f"\nkept as: {path}"
        return properties, text


class RealFaultItem(ChaosItem):
    """One real-fault class (kill, power, disk, ...) over the spec at its gate bounds (faults/classes/registry.py)."""

    def __init__(self, *, fault: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fault = fault

    def runtest(self) -> None:
        from strands_durable.faults.classes.registry import explore_plugin_fault

        suite = self.config.stash[SUITE]
        properties, findings = explore_plugin_fault(self.fault, self.golden, suite.workdir, suite.settings.seed)
        self.user_properties.extend(properties)
        if findings:
            raise ChaosFailure("\n".join(findings[:20]))
