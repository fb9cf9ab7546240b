"""pytest --strands-chaos: interrupt every step and tool-call boundary of each workflow, resume, prove it exact.

Inert until `--strands-chaos` (or `strands_chaos = true` in the ini file). Then each spec file named
`*.strands.yaml`, `*.strands.yml` or `*.strands.json` (plus those `collect.py` selects) becomes a golden
item, one item per crash point of the golden run (named by the crash-point id, so `-k` reruns one), and a
`schedules` item (several interrupts per run, hypothesis). The `strands_chaos` fixture and marker run a spec
with your own variables and Python tools. This module holds the options, the hooks, the fixture and the totals;
the items are in items.py, the Python-agent face in agents.py, the machinery in `strands_durable.faults`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_strands.items import SUITE, ChaosFailure, RealFaultItem, ScheduleItem, SpecFile
from pytest_strands.keys import SELECTION

# (flag, ini name, type, help); every option has an ini equivalent, the command line wins
OPTIONS = [
    ("--strands-chaos", "strands_chaos", bool, "run spec files as chaos tests (interrupt, resume, compare)"),
    ("--strands-chaos-seed", "strands_chaos_seed", int, "seed of the synthetic model and of point sampling (0)"),
    ("--strands-chaos-max-points", "strands_chaos_max_points", int, "explore at most N crash points per workflow"),
    ("--strands-chaos-faults", "strands_chaos_faults", str, "fault classes, comma-separated (interrupt)"),
    ("--strands-chaos-report", "strands_chaos_report", str, "write the chaos totals and every item as JSON"),
    ("--strands-chaos-html", "strands_chaos_html", str, "write an offline HTML report: crash-point timelines"),
    ("--strands-record", "strands_record", bool, "run each spec's real provider once and record its cassette"),
    ("--strands-chaos-full", "strands_chaos_full", bool, "run every resumed tail to the end (no convergence)"),
    ("--strands-chaos-schedules", "strands_chaos_schedules", int, "multi-fault schedules per workflow (10)"),
    ("--strands-chaos-pin-workers", "strands_chaos_pin_workers", str, "deprecated, no effect; removed in 0.2"),
    ("--strands-chaos-orders", "strands_chaos_orders", str, "golden|default|all: completion orders of tools"),
    ("--strands-chaos-orders-bound", "strands_chaos_orders_bound", int, "`all` lists orders of up to N tools (3)"),
    ("--strands-chaos-workers", "strands_chaos_workers", str, "N|auto: run crash points in N forked workers (Linux)"),
    ("--strands-chaos-freeze-gc", "strands_chaos_freeze_gc", bool, "hold the garbage collector back in crash points"),
    ("--strands-chaos-sessions", "strands_chaos_sessions", str, "s3://BUCKET/PREFIX: run the sessions on S3"),
    ("--strands-chaos-real-segments", "strands_chaos_real_segments", bool, "check every derived crash state"),
    ("--strands-chaos-keep-failures", "strands_chaos_keep_failures", str, "write shrunk failing schedules as tests"),
]
TOTALS = pytest.StashKey[Any]()
PIN_CHOICES = ("auto", "off")  # `--strands-chaos-pin-workers`: deprecated, no effect (docs/chaos-plugin.md)
PIN_DEPRECATED = (
    "--strands-chaos-pin-workers (ini strands_chaos_pin_workers) has no effect and will be removed in "
    "strands-durable 0.2: the plugin no longer pins threads to cores; remove it from your command line or ini file"
)
GOLDENS = "strands_chaos_goldens"  # the workerinput key naming the session's shared golden-run directory


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("strands-chaos", "durability chaos runs (strands-durable)")
    for flag, ini, kind, help_text in OPTIONS:
        if kind is bool:
            group.addoption(flag, action="store_true", default=None, dest=ini, help=help_text)
            parser.addini(ini, help_text, type="bool", default=False)
        else:
            group.addoption(flag, action="store", default=None, dest=ini, type=kind, help=help_text)
            parser.addini(ini, help_text, default="")
    parser.addini("strands_chaos_specs", "more spec files (globs) to run under chaos", type="paths", default=[])
    parser.addini("strands_chaos_spec_dirs", "directories whose .yaml/.yml/.json files are specs", type="paths")
    parser.addini("strands_chaos_hitl_answer", "answer every HITL step with this (default: the step's default)")
    parser.addini("strands_chaos_workspace", "the tools' external state, copied for every run", type="paths")


def _path_setting(config: pytest.Config, name: str) -> Path | None:
    """A directory option: relative to where pytest was started (on the command line) or to the ini file."""
    value = config.getoption(name)
    base = config.invocation_params.dir
    if value is None:
        value = config.getini(name)
        base = config.inipath.parent if config.inipath else base
    return base / str(value) if str(value or "").strip() else None


def _setting(config: pytest.Config, name: str, kind: type) -> Any:
    value = config.getoption(name)
    if value is None:
        value = config.getini(name)
        if kind is int:
            value = int(value) if str(value).strip() else None
    return value


def _require_hypothesis() -> None:
    """The `schedules` items draw their multi-fault schedules with hypothesis, which only the `pytest` and `test`
    extras install: say so before collecting, not in a ModuleNotFoundError from each workflow's item."""
    from strands_durable.faults.suite import ChaosUsageError

    try:
        import hypothesis  # noqa: F401
    except ImportError:
        raise ChaosUsageError(
            "--strands-chaos: the multi-fault schedules (--strands-chaos-schedules, 10 per workflow) need hypothesis: "
            "pip install 'strands-durable[pytest]', or pass --strands-chaos-schedules=0"
        ) from None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "strands_chaos(**options): a test using the strands_chaos fixture; runs only with --strands-chaos"
    )
    if not _setting(config, "strands_chaos", bool):
        return
    from pytest_strands.collect import select_specs
    from pytest_strands.properties import PackedProperties, packs_properties
    from pytest_strands.workers import WORKERS, parse_workers
    from strands_durable.faults.kit.report import ChaosTotals, report_path_problem
    from strands_durable.faults.suite import ChaosSettings, ChaosSuite, ChaosUsageError, parse_faults

    try:
        report = _setting(config, "strands_chaos_report", str)
        html = _setting(config, "strands_chaos_html", str)
        schedules = _setting(config, "strands_chaos_schedules", int)
        settings = ChaosSettings(
            seed=_setting(config, "strands_chaos_seed", int) or 0,
            max_points=_setting(config, "strands_chaos_max_points", int),
            faults=parse_faults(_setting(config, "strands_chaos_faults", str)),
            report=Path(report) if report else None,
            html=Path(html) if html else None,
            record=bool(_setting(config, "strands_record", bool)),
            full=bool(_setting(config, "strands_chaos_full", bool)),
            schedules=10 if schedules is None else schedules,
            hitl_answer=config.getini("strands_chaos_hitl_answer") or None,
            workspace=next(iter(config.getini("strands_chaos_workspace")), None),
            orders=_setting(config, "strands_chaos_orders", str) or "default",
            orders_bound=_setting(config, "strands_chaos_orders_bound", int) or 3,
            freeze_gc=bool(_setting(config, "strands_chaos_freeze_gc", bool)),
            sessions=_setting(config, "strands_chaos_sessions", str) or None,
            real_segments=bool(_setting(config, "strands_chaos_real_segments", bool)),
            keep_failures=_path_setting(config, "strands_chaos_keep_failures"),
        )
        pin = _setting(config, "strands_chaos_pin_workers", str)
        if pin and pin not in PIN_CHOICES:  # kept so that command lines and ini files naming it still run
            raise ChaosUsageError(f"--strands-chaos-pin-workers: {pin!r} is not one of {', '.join(PIN_CHOICES)}")
        workers = parse_workers(
            _setting(config, "strands_chaos_workers", str),
            platform=sys.platform,
            numprocesses=config.getoption("numprocesses", None),
        )
        if settings.schedules:
            _require_hypothesis()
        selection = select_specs(config)
        for flag, path in (("--strands-chaos-report", settings.report), ("--strands-chaos-html", settings.html)):
            problem = report_path_problem(path) if path is not None else None
            if problem:
                raise ChaosUsageError(f"{flag}: cannot write {path}: {problem}")
    except (ChaosUsageError, ValueError) as exc:
        raise pytest.UsageError(str(exc)) from None
    worker = getattr(config, "workerinput", None)
    if pin and worker is None:  # once, in the process the user started
        config.issue_config_time_warning(pytest.PytestDeprecationWarning(PIN_DEPRECATED), stacklevel=2)
    shared = worker.get(GOLDENS) if worker is not None else None
    config.stash[SUITE] = suite = ChaosSuite(settings, shared=Path(shared) if shared else None)
    config.stash[SELECTION] = selection
    config.stash[WORKERS] = workers
    config.stash[TOTALS] = ChaosTotals(
        seed=settings.seed,
        faults=settings.faults,
        mode=settings.mode,
        keep_items=settings.report is not None or settings.html is not None,  # read only by the reports
    )
    from pytest_strands.reproduce import ReproduceLines

    config.pluginmanager.register(ReproduceLines(), "strands-chaos-reproduce")
    from pytest_strands.release import GoldenRelease

    config.pluginmanager.register(GoldenRelease(), "strands-chaos-golden-release")
    if worker is None:  # a worker's reports reach the controller, which adds them up
        config.pluginmanager.register(ChaosReporting(config), "strands-chaos-reporting")
    elif packs_properties(config):
        config.pluginmanager.register(PackedProperties(), "strands-chaos-packed-properties")
    config.args.extend(p for p in selection.extra_args() if p not in config.args)
    if worker is None and config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(GoldenSharing(suite.workdir / "goldens"), "strands-chaos-golden-sharing")


def pytest_unconfigure(config: pytest.Config) -> None:
    suite = config.stash.get(SUITE, None)
    if suite is not None:
        suite.close()


def pytest_report_header(config: pytest.Config) -> str | None:
    suite = config.stash.get(SUITE, None)
    if suite is None:
        return None
    s = suite.settings
    where = f", sessions {s.sessions}" if s.sessions else ""
    return f"strands-chaos: seed {s.seed}, faults {','.join(s.faults)}, mode {s.mode}, scratch {suite.workdir}{where}"


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """On a pytest-xdist worker, before collecting: the golden runs of this worker's share of the spec files
    (every N-th, from its own number), so that the workers compute different workflows at once and each reads
    the others' from the session's shared directory when it collects them (faults/golden_file.py). With forked
    workers, the same shares computed in children forked for it (pytest_strands/workers.py)."""
    config = session.config
    suite, worker = config.stash.get(SUITE, None), getattr(config, "workerinput", None)
    if suite is not None and worker is None and not config.option.collectonly:
        from pytest_strands.workers import prepare_goldens_forked

        prepare_goldens_forked(session)
    if suite is None or worker is None or suite.shared is None:
        return
    from pytest_strands.collect import spec_files

    index, count = int(worker["workerid"].removeprefix("gw") or 0), int(worker["workercount"])
    suite.prepare_goldens(spec_files(config, config.stash[SELECTION])[index::count])


class GoldenSharing:
    """On the pytest-xdist controller: names the directory where the workers share golden runs (removed with the
    suite's scratch directory when the session ends)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[GOLDENS] = str(self.directory)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    """With `--strands-chaos-workers`, the dealt items' work runs in workers forked here, after collection
    (pytest_strands/workers.py); the workers end with the loop (also after `-x` or Ctrl+C)."""
    if session.config.stash.get(SUITE, None) is None:
        return (yield)
    from pytest_strands.workers import start_dealer, stop_dealer

    dealer = start_dealer(session)
    try:
        return (yield)
    finally:
        stop_dealer(session, dealer)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    selection = parent.config.stash.get(SELECTION, None)
    if selection is not None and selection.wants(file_path):
        return SpecFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On pytest-xdist workers, the long items (each workflow's `schedules` and real-fault items, 0.2 s and more
    against ~7 ms for a crash point) come first, so that the controller deals them out early and the workers
    finish together instead of one of them running the last workflow's schedules alone. Every worker orders the
    same collection the same way (xdist requires it); a serial run keeps the collection order."""
    if SUITE not in config.stash or not hasattr(config, "workerinput"):
        return
    items[:] = sorted(items, key=lambda item: not isinstance(item, (ScheduleItem, RealFaultItem)))


def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: Any) -> Any:
    """Agent factories marked `strands_chaos(prompts=...)` are collected like specs (pytest_strands/agents.py)."""
    if SUITE not in collector.config.stash or not callable(obj):
        return None
    from pytest_strands.agents import AgentFactory, factory_options

    options = factory_options(collector, name, obj)
    if options is None:
        return None
    return AgentFactory.from_parent(collector, name=name, factory=obj, options=options)


# -- the fixture and marker ---------------------------------------------------------------------------------------


class ChaosFixture:
    """`strands_chaos.run(spec, variables=..., tools=..., hitl_answer=..., max_points=...)`: golden run and every
    crash point of your own spec, in this test; raises `ChaosFailure` listing the failing points."""

    def __init__(self, suite: Any, node: pytest.Item, defaults: dict[str, Any]) -> None:
        self.suite = suite
        self.node = node
        self.defaults = defaults

    def run(self, spec: str | Path | None = None, **options: Any) -> list[Any]:
        with self._reproducible():
            return self._run(spec, **options)

    @contextlib.contextmanager
    def _reproducible(self) -> Iterator[None]:
        """A failure's text ends with the line that runs this test again (pytest_strands/reproduce.py)."""
        try:
            yield
        except ChaosFailure as failure:
            from pytest_strands.reproduce import reproduce_line

            raise ChaosFailure(f"{failure}\n{reproduce_line(self.node)}") from None

    def _golden(self, spec: str | Path | None, options: dict[str, Any], **target_fields: Any) -> tuple[Any, Path]:
        """The golden run of `spec` (or the marker's) under `options` (the marker's defaults, then the call's;
        `target_fields` replace fields of the target, e.g. `unit_order`), recorded in the item's properties; a
        ChaosFailure naming the spec when it cannot be explored or its golden run fails."""
        import dataclasses

        from pytest_strands.collect import hitl_hint
        from strands_durable.faults.kit.findings import Finding
        from strands_durable.faults.kit.target import NotExplorable
        from strands_durable.faults.suite import golden_properties, not_explorable_properties

        spec_path = Path(spec or options.pop("spec"))
        options.pop("spec", None)
        try:
            target = self.suite.target(spec_path, **options)
            golden = self.suite.golden(dataclasses.replace(target, **target_fields) if target_fields else target)
        except NotExplorable as reason:
            self.node.user_properties.extend(not_explorable_properties(spec_path.name, reason))
            raise ChaosFailure(str(reason)) from None
        except Exception as exc:
            problem = Finding("golden-run", hitl_hint(exc))
            self.node.user_properties.extend(golden_properties(spec_path.name, None, [problem]))
            raise ChaosFailure(f"the golden run failed:\n{problem}") from None
        self.node.user_properties.extend(golden_properties(spec_path.name, golden, golden.problems))
        if golden.problems:
            raise ChaosFailure("the golden run failed:\n" + "\n".join(map(str, golden.problems)))
        return golden, spec_path

    def _run(self, spec: str | Path | None = None, **options: Any) -> list[Any]:
        from strands_durable.faults.suite import outcome_properties

        options = {**self.defaults, **options}
        max_points = options.pop("max_points", None)
        golden, spec_path = self._golden(spec, options)
        outcomes = []
        for point_id in self.suite.point_ids(golden, max_points):
            outcome = self.suite.explore(golden, point_id)
            self.node.user_properties.extend(outcome_properties(spec_path.name, golden, outcome))
            outcomes.append(outcome)
        failing = [o for o in outcomes if not o.ok]
        if failing:
            shown = "\n\n".join(o.describe() for o in failing[:5])
            raise ChaosFailure(f"{len(failing)} of {len(outcomes)} crash points of {spec_path.name} failed:\n{shown}")
        return outcomes

    def run_schedule(
        self, schedule: list[str], spec: str | Path | None = None, *, unit_order: Any = (), **options: Any
    ) -> Any:
        """One multi-fault schedule of your spec: crash at each point of `schedule` in turn (each in the resume of
        the previous crash), resume, judge; `unit_order` names the units of a layer that finish first (a completion
        order other than the golden run's). What `--strands-chaos-keep-failures` writes calls this."""
        with self._reproducible():
            return self._run_schedule(list(schedule), spec, tuple(unit_order), options)

    def _run_schedule(
        self, schedule: list[str], spec: str | Path | None, unit_order: tuple[str, ...], options: dict[str, Any]
    ) -> Any:
        from strands_durable.faults.classes.explore import explore_schedule
        from strands_durable.faults.suite import outcome_properties

        options = {**self.defaults, **options}
        options.pop("max_points", None)
        golden, spec_path = self._golden(spec, options, unit_order=unit_order)
        if not schedule:
            raise ChaosFailure(f"schedule: no crash point of {spec_path.name} given")
        unknown = [point for point in schedule if point not in set(golden.point_ids)]
        if unknown:
            raise ChaosFailure(f"schedule: {unknown[0]!r} is not a crash point of {spec_path.name}")
        outcome = explore_schedule(golden, schedule, self.suite.scratch(golden, "schedule"))
        self.node.user_properties.extend(outcome_properties(spec_path.name, golden, outcome, counts_as_point=False))
        if not outcome.ok:
            raise ChaosFailure(f"failing schedule of {spec_path.name}:\n{outcome.describe()}")
        return outcome

    def run_agent(self, build_agent: Any, prompts: list[str], **options: Any) -> list[Any]:
        """Your own Python agent: `build_agent(ctx)` (or "module:function") crashed at every point, resumed both
        ways, judged (pytest_strands/agents.py); options `max_points`, `session_id`, `cassette`."""
        from pytest_strands.agents import run_agent

        known = {k: v for k, v in self.defaults.items() if k in ("max_points", "session_id", "cassette")}
        with self._reproducible():
            return run_agent(self.node, self.suite, build_agent, prompts, {**known, **options})

    def gate_backend(self, factory: Any, **options: Any) -> Any:
        """The backend gate over `factory(ctx)` (a SessionManager, SessionRepository or Storage; or
        "module:function"): options `level`, `run_limit_s`, `points`, `name`. Its BackendReport; raises
        ChaosFailure naming the failed clauses (pytest_strands/backends.py, docs/backends.md)."""
        from pytest_strands.backends import gate_backend

        known = {k: v for k, v in self.defaults.items() if k in ("level", "run_limit_s")}
        return gate_backend(self.node, factory, {**known, **options})

    @staticmethod
    def point(name: str) -> None:
        """A crash point inside a tool body (run_agent crashes there too); nothing outside a chaos run."""
        from strands_durable.faults.agents.run import point

        point(name)


@pytest.fixture
def strands_chaos(request: pytest.FixtureRequest) -> ChaosFixture:
    suite = request.config.stash.get(SUITE, None)
    if suite is None:
        pytest.skip("strands-chaos tests run with --strands-chaos")
    marker = request.node.get_closest_marker("strands_chaos")
    return ChaosFixture(suite, request.node, dict(marker.kwargs) if marker else {})


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("strands_chaos") and SUITE not in item.config.stash:
        pytest.skip("strands-chaos tests run with --strands-chaos")


# -- totals: the summary line, the JSON report (also under pytest-xdist: reports carry the properties) -------


class ChaosReporting:
    """Registered only under --strands-chaos, in the process where reports arrive (not on an xdist worker): adds
    up item properties (unpacking those a worker packed, pytest_strands/properties.py), prints the summary line
    and writes the JSON report."""

    def __init__(self, config: pytest.Config) -> None:
        from pytest_strands.properties import unpack

        self.config = config
        self.totals = config.stash[TOTALS]
        self.unpack = unpack
        self.write_errors: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.totals.add(report.nodeid, report.outcome, self.unpack(report.user_properties))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        terminalreporter.write_line(self.totals.line())
        totals = self.totals
        for line in (
            totals.not_explorable_line(),
            totals.failing_golden_line(),
            totals.untaken_edges_line(),
            totals.segments_line(),
        ):
            if line is not None:
                terminalreporter.write_line(line)
        for line in totals.coverage.lines():
            terminalreporter.write_line(line)
        if not self.totals.recorded:
            from pytest_strands.collect import nothing_collected_line

            why = nothing_collected_line(self.config, self.config.stash[SELECTION])
            if why is not None:
                terminalreporter.write_line(why)
        html = self.config.stash[SUITE].settings.html
        if html is not None and not self.write_errors:
            terminalreporter.write_line(f"strands-chaos: HTML report {html}")
        for error in self.write_errors:
            terminalreporter.write_line(error, red=True)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        settings = self.config.stash[SUITE].settings
        for path, write in ((settings.report, self.totals.write_json), (settings.html, self._write_html)):
            try:
                if path is not None:
                    write(path)
            except OSError as exc:  # disk full, removed directory: one line, and the run fails
                self.write_errors.append(f"Error: strands-chaos: cannot write {path}: {exc.strerror or exc}")
                session.exitstatus = max(int(session.exitstatus), int(pytest.ExitCode.TESTS_FAILED))

    def _write_html(self, path: Path) -> None:
        from pytest_strands.html import write_html

        write_html(self.totals.body(), path)
