"""A chaos suite: the settings of one `pytest --strands-chaos` session and the work behind each of its items.

The pytest plugin (`pytest_strands.plugin`) is a thin face over this: it turns spec files into a golden item,
one item per crash point and one schedules item, and reports each item's counts as properties.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strands_durable.faults.kit.collector import collect_less_during_points
from strands_durable.faults.kit.report import PROPERTY_PREFIX
from strands_durable.faults.kit.target import ChaosTarget, NotExplorable, spec_target
from strands_durable.faults.kit.target import network_tool_names as network_tool_names  # named here by the plugin tests

if TYPE_CHECKING:  # the xdist controller imports this module to configure; the runs' machinery is for the workers
    from strands_durable.faults.classes.explore import PointOutcome
    from strands_durable.faults.kit.findings import Finding
    from strands_durable.faults.kit.golden import WorkflowGoldenRun

SPEC_SUFFIXES = (".strands.yaml", ".strands.yml", ".strands.json")
ORDER_POLICIES = ("golden", "default", "all")  # the names faults/kit/orders.py knows (imported lazily there)


class ChaosUsageError(ValueError):
    """A bad chaos option (the plugin turns it into pytest's usage error)."""


def parse_faults(text: str | None) -> list[str]:
    """`--strands-chaos-faults`: names from the registry of fault classes (faults/classes/registry.py), `interrupt` by
    default."""
    names = [part.strip() for part in (text or "interrupt").split(",") if part.strip()]
    if names == ["interrupt"]:  # the default needs no registry (importing it costs the xdist controller ~30 ms)
        return names
    from strands_durable.faults.classes.registry import fault_class_names

    known = fault_class_names()
    for name in names:
        if name not in known:
            choices = ", ".join(known)
            raise ChaosUsageError(f"--strands-chaos-faults: unknown fault class {name!r}; choose from {choices}")
    return names or ["interrupt"]


@dataclass
class ChaosSettings:
    seed: int = 0
    max_points: int | None = None  # per workflow
    faults: list[str] = field(default_factory=lambda: ["interrupt"])
    report: Path | None = None
    html: Path | None = None  # the offline HTML report (pytest_strands/html.py)
    record: bool = False
    full: bool = False
    schedules: int = 10  # hypothesis examples per workflow
    hitl_answer: str | None = None
    workspace: Path | None = None  # the tools' external state every run starts from (a copy per run)
    orders: str = "default"  # completion orders of concurrent tools: golden | default | all (faults/kit/orders.py)
    orders_bound: int = 3  # `all` lists every order of a turn of at most this many tools
    freeze_gc: bool = False  # the kit's one process tuning (faults/kit/collector.py), opt-in
    sessions: str | None = None  # where the runs' sessions live: None (local directories) or s3://BUCKET/PREFIX
    real_segments: bool = False  # every interrupt also runs its real crash segment (faults/kit/derived.py)
    keep_failures: Path | None = None  # where a shrunk failing schedule is written as a test (pytest_strands/kept.py)

    def __post_init__(self) -> None:
        self.workspace = _workspace_dir(self.workspace)
        if self.sessions is not None:
            self.sessions = _sessions_location(self.sessions, self.faults)
        if self.orders not in ORDER_POLICIES:
            choices = "|".join(ORDER_POLICIES)
            raise ChaosUsageError(f"--strands-chaos-orders: {self.orders!r} is not one of {choices}")
        if self.orders_bound < 2:
            raise ChaosUsageError(f"--strands-chaos-orders-bound: {self.orders_bound} is below 2")

    @property
    def mode(self) -> str:
        return "full" if self.full else "convergence"


def _workspace_dir(path: str | Path | None) -> Path | None:
    """The directory of the tools' external state; naming one that does not exist is a usage error."""
    if path is None or str(path) == "":
        return None
    directory = Path(path)
    if not directory.is_dir():
        raise ChaosUsageError(f"strands_chaos_workspace: not a directory: {directory}")
    return directory


S3_FAULTS = ("interrupt", "kill", "concurrent")  # the classes that run over S3 (the others fault local files)


def _sessions_location(value: str, faults: list[str]) -> str:
    """`--strands-chaos-sessions`: an S3 URL, with fault classes that run over S3."""
    from strands_durable.errors import UsageError
    from strands_durable.faults.kit.stores import check_location

    try:
        location = check_location(value)
    except UsageError as exc:
        raise ChaosUsageError(str(exc)) from None
    local_only = [name for name in faults if name not in S3_FAULTS]
    if local_only:
        raise ChaosUsageError(
            f"--strands-chaos-sessions: fault class {local_only[0]!r} faults local files and cannot run on S3; "
            f"choose from {', '.join(S3_FAULTS)}"
        )
    return location


def _spec_workspace(spec_path: Path) -> Path | None:
    """The directory of external state a spec names in `metadata.strands_chaos_workspace` (relative to the spec
    file; `metadata` is free-form in strands-cli v0, so the spec stays valid there)."""
    from strands_durable.spec import load_spec

    named = load_spec(spec_path).metadata.get("strands_chaos_workspace")
    return spec_path.parent / str(named) if named else None


def _set_chaos_sessions(location: str | None) -> str | None:
    """Point the fault kit's stores at `location` (None: local directories) for this process and the children it
    forks or starts (`faults/kit/stores.py` reads it); returns the previous setting."""
    from strands_durable.faults.kit.stores import SESSIONS_ENV

    before = os.environ.get(SESSIONS_ENV)
    if location is None:
        os.environ.pop(SESSIONS_ENV, None)
    else:
        os.environ[SESSIONS_ENV] = location
    return before


def default_workdir() -> Path:
    """Scratch space for chaos runs: STRANDS_CHAOS_TMPDIR, else /dev/shm when writable (crash runs create and
    delete many small files), else the system temp directory (kit/scratch_roots.py)."""
    chosen = os.environ.get("STRANDS_CHAOS_TMPDIR")
    if not chosen and os.access("/dev/shm", os.W_OK):
        chosen = "/dev/shm"
    from strands_durable.faults.kit.scratch_roots import new_scratch_root

    return new_scratch_root(chosen or None)  # roots left by killed runs there are removed first


class ChaosSuite:
    """`shared`: a directory where the processes of one session (pytest-xdist workers) share golden runs
    (faults/golden_file.py); None: each golden run is computed here."""

    def __init__(self, settings: ChaosSettings, workdir: Path | None = None, shared: Path | None = None) -> None:
        self.settings = settings
        self.workdir = workdir or default_workdir()
        self.shared = shared
        self._sessions_before = _set_chaos_sessions(settings.sessions) if settings.sessions else None
        self._count = 0
        self.scratch_tag = ""  # a forked process's own suffix for its scratch directories
        self._prepared: dict[str, WorkflowGoldenRun] = {}  # golden key -> golden run, until collected
        collect_less_during_points(settings.freeze_gc)

    def close(self) -> None:
        from strands_durable.store.fileops import FileOps

        if self.settings.sessions:
            _set_chaos_sessions(self._sessions_before)
        collect_less_during_points(False)  # the default again for whatever runs next in this process
        if self.workdir.exists():
            FileOps().remove_tree(self.workdir)

    def _dir(self, name: str) -> Path:
        self._count += 1
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name)[-60:]
        return self.workdir / f"{self._count:04d}-{slug}{self.scratch_tag}"

    def target(
        self,
        spec_path: Path,
        *,
        variables: dict[str, str] | None = None,
        tools: dict[str, Any] | None = None,
        hitl_answer: str | None = None,
        workspace: str | Path | None = None,
    ) -> ChaosTarget:
        """The target for a spec (`faults.kit.target.spec_target`): the cassette's answers when one exists (recorded
        first with `record`), otherwise the synthetic model; a spec with network tools and no cassette raises
        `NotExplorable`."""
        target = spec_target(
            Path(spec_path),
            seed=self.settings.seed,
            variables=variables,
            tools=tools,
            hitl_answer=hitl_answer if hitl_answer is not None else self.settings.hitl_answer,
            full=self.settings.full,
            workspace=_workspace_dir(workspace or _spec_workspace(Path(spec_path)) or self.settings.workspace),
            recording=self.settings.record,
        )
        if self.settings.record:
            from strands_durable.faults.kit.runs import record_cassette

            record_cassette(target, self._dir("record"))
        return target

    def golden(self, target: ChaosTarget) -> WorkflowGoldenRun:
        golden = self._golden(target)
        from strands_durable.faults.kit.derived import REAL_SEGMENTS, SegmentPolicy

        golden.segments = REAL_SEGMENTS if self.settings.real_segments else SegmentPolicy(seed=self.settings.seed)
        return golden

    def _golden(self, target: ChaosTarget) -> WorkflowGoldenRun:
        from strands_durable.faults.kit.runs import run_golden

        if self.shared is None:
            return run_golden(target, self._dir(target.spec_path.name))
        from strands_durable.faults.golden_file import SharedGoldens, golden_key

        key = golden_key(target)  # the same spec with other variables, options or tools is another golden run
        prepared = self._prepared.pop(key, None) if key is not None else None
        if prepared is not None:
            return prepared
        workdir = self._dir(target.spec_path.name)
        return SharedGoldens(self.shared).golden(target, workdir, lambda: run_golden(target, workdir))

    def prepare_goldens(self, spec_paths: list[Path]) -> None:
        """Compute (or read, when another process already has) the golden runs of these specs now, for
        `golden` to return when their files are collected: each worker prepares its own share first, so the
        workers compute different workflows at once. A spec that fails here fails again when collected."""
        if self.shared is None or self.settings.record:
            return
        from strands_durable.faults.golden_file import golden_key

        for path in spec_paths:
            try:
                target = self.target(path)
                golden, key = self.golden(target), golden_key(target)
            except Exception:  # reported by the spec's own golden item when it is collected
                continue
            if key is not None:
                self._prepared[key] = golden

    def explore(self, golden: WorkflowGoldenRun, point_id: str) -> PointOutcome:
        from strands_durable.faults.classes.explore import explore_point

        return explore_point(golden, point_id, self.scratch(golden, "points"))

    def scratch(self, golden: WorkflowGoldenRun, name: str) -> Path:
        """A workflow's scratch directory for one kind of run, of this process's own (`scratch_tag`: each forked
        worker reuses its directories point after point, never another's)."""
        return golden.workdir / f"{name}{self.scratch_tag}"

    def unit_orders(self, golden: WorkflowGoldenRun) -> list[OrderedRun]:
        """The completion orders of the golden run's layers of concurrent units the policy explores, each with its
        own golden run, whether that run reached the order and the points inside the layer to explore in it
        (spread over them as `max_points` says)."""
        from strands_durable.faults.kit.golden import spread
        from strands_durable.faults.kit.unit_orders import points_inside, reached, unit_orders

        if golden.problems:
            return []
        settings = self.settings
        runs = []
        for order in unit_orders(golden, settings.orders, seed=settings.seed, bound=settings.orders_bound):
            ordered = self.golden(order.target(golden.target))
            hit = reached(ordered, order) and not ordered.problems
            inside = spread(points_inside(ordered, order), settings.max_points) if hit else []
            runs.append(OrderedRun(order, hit, ordered, inside))
        return runs

    @staticmethod
    def orders_coverage(golden: WorkflowGoldenRun, runs: list[OrderedRun]) -> tuple[int, int] | None:
        """(completion orders explored, possible) over the golden run's layers; None when it has none."""
        from strands_durable.faults.kit.unit_orders import layers, orders_possible

        if golden.problems or not layers(golden):
            return None
        return len(layers(golden)) + sum(1 for run in runs if run.reached), orders_possible(golden)

    def point_ids(self, golden: WorkflowGoldenRun, max_points: int | None = None) -> list[str]:
        from strands_durable.faults.classes.explore import iter_points

        limit = max_points if max_points is not None else self.settings.max_points
        return list(iter_points(golden, limit, self.settings.seed))


@dataclass(frozen=True)
class OrderedRun:
    """One completion order of a layer (`faults/kit/unit_orders.py`), its golden run, whether that run finished
    the layer in the order, and the ids of its points inside the layer to explore."""

    order: Any
    reached: bool
    golden: WorkflowGoldenRun
    point_ids: list[str]


# -- item properties (JUnit XML and the totals) ---------------------------------------------------------------


def golden_properties(
    workflow: str, golden: WorkflowGoldenRun | None, problems: list[Finding], orders: tuple[int, int] | None = None
) -> list[tuple[str, Any]]:
    props: dict[str, Any] = {
        "workflow": workflow,
        "explored": 0,
        "divergences": int(any(not p.invalid_history for p in problems)),
        "invalid_histories": int(any(p.invalid_history for p in problems)),
        "problems": json.dumps([str(p) for p in problems]),
    }
    if golden is not None:
        props.update(
            crash_points=len(golden.points),
            site_kinds_found=",".join(sorted(golden.site_kinds)),
            tool_executions=golden.tool_executions,
            model_requests=golden.model_requests,
            golden_failure=golden.failure or "",
            untaken_edges=", ".join(golden.untaken_edges),
        )
    if orders is not None:
        props["orders"] = json.dumps(list(orders))
    return _prefixed(props)


def order_properties(workflow: str, problems: list[str]) -> list[tuple[str, Any]]:
    """An order's golden-run item: no crash point of its own; diverged when the order was not reached or the
    run failed."""
    return _prefixed(
        {
            "workflow": workflow,
            "explored": 0,
            "divergences": int(bool(problems)),
            "invalid_histories": 0,
            "problems": json.dumps(problems),
        }
    )


def not_explorable_properties(workflow: str, reason: NotExplorable) -> list[tuple[str, Any]]:
    """A spec that could not be explored: counted on its own summary line, never in the crash-point totals."""
    return _prefixed(
        {
            "workflow": workflow,
            "not_explorable": ",".join(reason.tools),
            "record_command": reason.command,
            "problems": json.dumps([str(reason)]),
        }
    )


def outcome_properties(
    workflow: str, golden: WorkflowGoldenRun, outcome: PointOutcome, *, counts_as_point: bool = True
) -> list[tuple[str, Any]]:
    """One explored point (or a failing schedule, which is not a crash point of its own): counted once, as
    diverged and/or invalid when it found problems."""
    from strands_durable.faults.kit.coverage import one_point

    unexplored = not outcome.explored
    site = golden.point(outcome.point_ids[0]).point.site
    return _prefixed(
        {
            "workflow": workflow,
            "point": " -> ".join(outcome.point_ids),
            "run_index": golden.point(outcome.point_ids[0]).index,  # where the point lies in the golden run
            "explored": int(outcome.explored and counts_as_point),
            "sites": site if outcome.explored else "",
            "fired": " -> ".join(outcome.fired),
            "converged_at": outcome.converged_at or "",
            "runs": outcome.runs,
            "segment": outcome.segment,
            "divergences": int(unexplored or any(not p.invalid_history for p in outcome.problems)),
            "invalid_histories": int(any(p.invalid_history for p in outcome.problems)),
            "problems": json.dumps([str(p) for p in outcome.problems]),
            "coverage": one_point("interrupt", site, outcome.explored) if counts_as_point else "",
        }
    )


def schedules_properties(workflow: str, outcomes: list[PointOutcome], failed: bool) -> list[tuple[str, Any]]:
    """A schedules item: every schedule it tried (point ids in order, where faults fired, passed or not) for the
    JSON report; appended to the failing schedule's record, or a record of its own when all passed."""
    tried = [{"points": o.point_ids, "fired": o.fired, "ok": o.ok, "runs": o.runs} for o in outcomes]
    own = {} if failed else {"workflow": workflow, "explored": 0, "problems": json.dumps([])}
    return _prefixed({**own, "schedules": json.dumps(tried)})


def _prefixed(props: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(PROPERTY_PREFIX + name, value) for name, value in props.items()]
