"""The backend gate (`run_backend_gate`, `strands chaos backend`): any SessionManager, SessionRepository or
Storage SIGKILLed in forked children at every crash point of the built-in conversation, resumed both ways, raced
by two resumers, judged clause by clause; bad factories are one `Error:` line and an exit code; a hanging
backend fails `liveness` after the per-run limit."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from strands_durable.crashpoints import CrashPoint
from strands_durable.faults.agents.run import Run
from strands_durable.faults.backends import BackendReport, GateContext, run_backend_gate
from strands_durable.faults.backends.children import Place, Setup, build_agent
from strands_durable.faults.backends.explore import factory_points
from strands_durable.faults.backends.instrument import CallLog
from tests.conftest import REPO
from tests.faults import backend_factories

pytestmark = pytest.mark.slow
FACTORIES = "tests.faults.backend_factories"


def outcomes(report: BackendReport) -> dict[str, str]:
    return {c.name: c.outcome for c in report.clauses}


def strands_chaos_backend(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "strands_durable", "chaos", "backend", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_our_manager_passes_every_clause_and_reaches_concurrent_safe() -> None:
    report = run_backend_gate(backend_factories.durable, every=5)
    assert report.kind == "session-manager"
    assert {name for name, outcome in outcomes(report).items() if outcome != "pass"} == set()
    assert report.level == "concurrent-safe"
    document = report.as_json()
    assert document["backend"] == "tests.faults.backend_factories:durable"
    assert {"backend", "level", "clauses"} <= set(document)
    assert all(set(c) == {"name", "outcome", "detail", "reproduce"} for c in document["clauses"])


def test_the_sdks_file_manager_fails_valid_history_tool_results_nodes_and_two_resumers() -> None:
    report = run_backend_gate(backend_factories.sdk_file, every=3)
    failed = {c.name for c in report.failed}
    assert {"valid-history", "tool-results-once", "nodes-not-rerun", "two-resumers"} <= failed
    assert "acknowledged-not-lost" not in failed
    assert report.repository_calls > 0  # its own repository, behind the proxy
    assert report.level == "none"
    first = report.clause("valid-history")
    assert first is not None and "--point" in first.reproduce


@pytest.mark.parametrize("order", ["SDK_FIRST", "SDK_LAST"])
def test_a_crash_point_lies_on_each_side_of_a_manager_callback_at_either_order(tmp_path: Path, order: str) -> None:
    place = Place(tmp_path, "bracket")
    setup = Setup(backend_factories.noting_manager(order), "session-manager", "p")
    seen: list[tuple[str, int]] = []

    def note(point: CrashPoint) -> None:
        if point.path.startswith("hook/message:user"):
            noted = place.backend / "noted"
            seen.append((point.path, len(noted.read_text().splitlines()) if noted.exists() else 0))

    with Run() as run:
        run.bus.subscribe(note)
        agent = build_agent(setup, place, run, CallLog(), "golden")
        agent("Record the taxi and the hotel.")
    assert seen[:2] == [("hook/message:user:first", 0), ("hook/message:user:last", 1)]


def test_the_factory_kills_fire_are_resumed_and_catch_a_bug_only_they_reach() -> None:
    """Session creation happens inside the factory call: the gate kills runs there (`factory/kill@IofN`, spread
    over the golden run's factory call) and resumes them; a lock left by a creator killed mid-creation is caught
    only there."""
    from strands_durable.testing.backends import reference_repository, stale_lock_manager

    kills = factory_points()
    reference = run_backend_gate(reference_repository, points=kills)
    assert reference.factory_kills >= 1 and reference.crash_points == len(kills)
    assert reference.failed == [], reference.table()  # a correct repository creates a session whole
    assert reference.as_json()["factory_kills"] == reference.factory_kills
    report = run_backend_gate(stale_lock_manager, points=kills)
    assert report.factory_kills >= 1
    assert {c.name for c in report.failed} == {"valid-history"}, report.table()
    failed = report.clause("valid-history")
    assert failed is not None and "is being created by another process" in failed.detail
    assert "--point 'factory/kill@" in failed.reproduce


def reproduced(line: str) -> dict[str, dict[str, str]]:
    """Run a failure's reproduce line (`strands chaos backend ...`) with --json: its clauses by name."""
    words = shlex.split(line)
    assert words[:3] == ["strands", "chaos", "backend"], line
    result = strands_chaos_backend(*words[3:], "--json")
    assert result.returncode == 1, result.stderr
    return {c["name"]: c for c in json.loads(result.stdout)["clauses"]}


def test_the_reproduce_line_of_a_graph_or_swarm_point_fails_nodes_not_rerun_again() -> None:
    from strands_durable.testing.backends import progress_forgetting_manager

    report = run_backend_gate(progress_forgetting_manager, every=4)
    failed = report.clause("nodes-not-rerun")
    assert failed is not None and failed.outcome == "fail", report.table()
    assert re.search(r"--point '(graph|swarm):", failed.reproduce), failed.reproduce
    again = reproduced(failed.reproduce)["nodes-not-rerun"]
    assert again["outcome"] == "fail" and again["detail"] == failed.detail.split(" (and ")[0]


def test_the_reproduce_line_of_two_resumers_races_them_again() -> None:
    from strands_durable.testing.backends import detaching_manager

    report = run_backend_gate(detaching_manager, every=1000)
    failed = report.clause("two-resumers")
    assert failed is not None and failed.outcome == "fail", report.table()
    assert failed.reproduce.endswith("--point two-resumers")
    again = reproduced(failed.reproduce)["two-resumers"]
    same = failed.detail.split(";")[0]  # which resumer's prompt is stored is the race's to decide
    assert again["outcome"] == "fail" and again["detail"].split(";")[0] == same


def test_the_command_prints_only_json_on_stdout_and_exits_1_when_a_clause_fails() -> None:
    point = "hook/message:assistant:last/store.before_commit"
    result = strands_chaos_backend(f"{FACTORIES}:sdk_file", "--json", "--point", point)
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["backend"] == f"{FACTORIES}:sdk_file" and document["level"] == "none"
    failed = {c["name"] for c in document["clauses"] if c["outcome"] == "fail"}
    assert "valid-history" in failed
    assert "valid-history" in result.stderr  # the table went to stderr


@pytest.mark.parametrize(
    ("factory", "code", "says"),
    [
        ("no_such_module_here:make", 2, "cannot import no_such_module_here"),
        (f"{FACTORIES}:missing", 2, "has no missing"),
        (f"{FACTORIES}:not_a_backend", 2, "returned builtins.dict"),
        (f"{FACTORIES}:server_not_running", 12, "raised ConnectionError: Error 111"),
        (f"{FACTORIES}:durable_declaring_a_crash_clause", 2, "only durable-per-message and two-resumers"),
        ("not-a-factory", 2, "expected MODULE:FACTORY"),
    ],
)
def test_a_bad_factory_is_one_error_line_naming_it_with_its_exit_code(factory: str, code: int, says: str) -> None:
    result = strands_chaos_backend(factory)
    assert result.returncode == code
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and says in errors[0] and factory.split(":")[0] in errors[0]
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_a_backend_that_hangs_is_stopped_after_the_run_limit_and_fails_liveness() -> None:
    from strands_durable.testing.backends import hanging_manager

    point = "hook/message:user:last/store.before_commit"  # the prompt is stored: the resume finds it pending
    report = run_backend_gate(hanging_manager, points=[point], run_limit_s=4)
    liveness = report.clause("liveness")
    assert liveness is not None and liveness.outcome == "fail"
    assert "did not end within the per-run limit" in liveness.detail
    assert report.seconds < 60


def test_a_clause_declared_absent_is_not_applicable_and_caps_the_level() -> None:
    report = run_backend_gate(backend_factories.durable_without_racing, every=12)
    racing = report.clause("two-resumers")
    assert racing is not None and racing.outcome == "not applicable" and "declared absent" in racing.detail
    assert report.level == "message-durable"


def test_the_context_carries_session_directory_and_prefix() -> None:
    ctx = GateContext("s", Path("d"), "p")
    assert (ctx.session_id, ctx.directory, ctx.prefix) == ("s", Path("d"), "p")
